// snippet: reads %scales:${scales_type} %${p}ra:index %${p}rb:index %k:index; defines %${p}da_f32:f32 %${p}db_f32:f32; holes decode_a decode_b
            // the two rows' E8M0 scales of the K block of %k (${bk} codes), decoded to f32 (2^-127,
            // code 0, reads as 0, as in the decode step's loop)
            %${p}cbk = arith.constant ${bk} : index
            %${p}kb = arith.divui %k, %${p}cbk : index
            %${p}ea = memref.load %scales[%${p}ra, %${p}kb] : ${scales_type}
            %${p}eb = memref.load %scales[%${p}rb, %${p}kb] : ${scales_type}
${decode_a}
${decode_b}
