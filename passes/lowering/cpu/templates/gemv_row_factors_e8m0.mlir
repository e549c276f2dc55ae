        // snippet: reads %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}xi8> %factors:memref<${KB}xf32> %n:index %c0:index; defines %${p}c8:index %${p}c_vec:index; locals %${p}kb %${p}codes %${p}wide %${p}bits %${p}pow2 %${p}is_nan %${p}w %${p}x %${p}t; holes tail
        // mxfp8: the row's E8M0 scale codes decoded 8 at a time (2^(e - 127) as the f32 of e
        // shifted to its exponent; 255 NaN; 0 reads as 0.0), times x's scales (times 2^8): one
        // factor a K block for the row's loop (gemv_accumulate_factors.mlir), as the loop
        // multiplied them each step before
        %${p}c8 = arith.constant 8 : index
        %${p}c_vec = arith.constant ${KB_VEC} : index
        %${p}c23v = arith.constant dense<23> : vector<8xi32>
        %${p}c255v = arith.constant dense<255> : vector<8xi32>
        %${p}nanv = arith.constant dense<0x7FC00000> : vector<8xf32>
        scf.for %${p}kb = %c0 to %${p}c_vec step %${p}c8 {
          %${p}codes = vector.load %ws[%n, %${p}kb] : memref<${RB}x${WKB}xi8>, vector<8xi8>
          %${p}wide = arith.extui %${p}codes : vector<8xi8> to vector<8xi32>
          %${p}bits = arith.shli %${p}wide, %${p}c23v : vector<8xi32>
          %${p}pow2 = arith.bitcast %${p}bits : vector<8xi32> to vector<8xf32>
          %${p}is_nan = arith.cmpi eq, %${p}wide, %${p}c255v : vector<8xi32>
          %${p}w = arith.select %${p}is_nan, %${p}nanv, %${p}pow2 : vector<8xi1>, vector<8xf32>
          %${p}x = vector.load %xs[%${p}kb] : memref<${KB}xf32>, vector<8xf32>
          %${p}t = arith.mulf %${p}x, %${p}w : vector<8xf32>
          vector.store %${p}t, %factors[%${p}kb] : memref<${KB}xf32>, vector<8xf32>
        }
${tail}
