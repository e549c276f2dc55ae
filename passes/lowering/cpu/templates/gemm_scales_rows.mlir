// snippet: reads %scales:${scales_type} %${p}ra:index %${p}rb:index %kc:index %c0:index %sdec:memref<16x32xf32>${decode_reads}; defines; holes decode
            // rows ${ra} and ${rb} of the 16: their ${sb} block scales of the K block from %kc
            // (${bk} codes a block) decoded to f32 (reads:${decode_reads}), into %sdec's rows
            // ${ra} and ${rb} (lanes past ${sb} repeat a scale and are not read)
            %${p}la = arith.constant ${ra} : index
            %${p}lb = arith.constant ${rb} : index
            %${p}cbk = arith.constant ${bk} : index
            %${p}kb = arith.divui %kc, %${p}cbk : index
            %${p}ca = vector.load %scales[%${p}ra, %${p}kb] : ${scales_type}, vector<${sb}xi8>
            %${p}cb = vector.load %scales[%${p}rb, %${p}kb] : ${scales_type}, vector<${sb}xi8>
            %${p}codes = vector.shuffle %${p}ca, %${p}cb ${pad} : vector<${sb}xi8>, vector<${sb}xi8>
${decode}
            %${p}wa = "vector.extract_strided_slice"(%${p}wide) <{offsets = [0], sizes = [32], strides = [1]}> : (vector<64xf32>) -> vector<32xf32>
            %${p}wb = "vector.extract_strided_slice"(%${p}wide) <{offsets = [32], sizes = [32], strides = [1]}> : (vector<64xf32>) -> vector<32xf32>
            vector.store %${p}wa, %sdec[%${p}la, %c0] : memref<16x32xf32>, vector<32xf32>
            vector.store %${p}wb, %sdec[%${p}lb, %c0] : memref<16x32xf32>, vector<32xf32>
