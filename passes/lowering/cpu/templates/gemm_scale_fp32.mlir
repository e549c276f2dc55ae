// snippet: reads %scales:${scales_type} %${p}ra:index %${p}rb:index %k:index; defines %${p}fa:f32 %${p}fb:f32
            // the two rows' fp32 scales of the K block of %k (${bk} codes; rows in blocks of ${rb})
            %${p}cbk = arith.constant ${bk} : index
            %${p}crb = arith.constant ${rb} : index
            %${p}kb = arith.divui %k, %${p}cbk : index
            %${p}ba = arith.divui %${p}ra, %${p}crb : index
            %${p}bb = arith.divui %${p}rb, %${p}crb : index
            %${p}fa = memref.load %scales[${at_a}] : ${scales_type}
            %${p}fb = memref.load %scales[${at_b}] : ${scales_type}
