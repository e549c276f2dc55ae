// snippet: reads %kc:index${store_reads}; defines; holes last sums
            // at the last block of K the outputs into out (${last_doc}); before it, the sums so
            // far into sums (f32, read back at the next block; read:${store_reads})
            %${p}k_last = arith.constant ${k_last} : index
            %${p}last = arith.cmpi eq, %kc, %${p}k_last : index
            scf.if %${p}last {
${last}
            } else {
${sums}
            }
