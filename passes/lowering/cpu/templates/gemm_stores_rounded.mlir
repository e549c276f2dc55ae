// snippet: reads %kc:index${store_reads}; defines; holes rounded sums
            // at the last block of K the sums rounded to bf16 into out16 (${alpha_doc}); before
            // it, the sums so far into out (f32, read back at the next block; read:${store_reads})
            %${p}k_last = arith.constant ${k_last} : index
            %${p}last = arith.cmpi eq, %kc, %${p}k_last : index
            scf.if %${p}last {
${rounded}
            } else {
${sums}
            }
