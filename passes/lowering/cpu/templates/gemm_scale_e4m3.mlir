// snippet: reads %scales:${scales_type} %${p}ra:index %${p}rb:index %k:index; defines %${p}a0_val:f32 %${p}a1_val:f32 %${p}b0_val:f32 %${p}b1_val:f32; holes decode_a0 decode_a1 decode_b0 decode_b1
            // the two rows' E4M3 scales of the two blocks of 16 codes from %k, decoded to f32
            %${p}c16 = arith.constant 16 : index
            %${p}one = arith.constant 1 : index
            %${p}kb0 = arith.divui %k, %${p}c16 : index
            %${p}kb1 = arith.addi %${p}kb0, %${p}one : index
            %${p}a0_code = memref.load %scales[%${p}ra, %${p}kb0] : ${scales_type}
            %${p}a1_code = memref.load %scales[%${p}ra, %${p}kb1] : ${scales_type}
            %${p}b0_code = memref.load %scales[%${p}rb, %${p}kb0] : ${scales_type}
            %${p}b1_code = memref.load %scales[%${p}rb, %${p}kb1] : ${scales_type}
${decode_a0}
${decode_a1}
${decode_b0}
${decode_b1}
