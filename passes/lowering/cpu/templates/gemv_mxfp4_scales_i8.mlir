          // snippet: reads %${p}k:index %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %n:index %c16:index %e8m0_shift:vector<4xi32> %e8m0_nan:vector<4xi32> %nan4:vector<4xf32>; defines %${p}s:vector<4xf32>
          // AVX2, mxfp4: the 64 bytes' 4 blocks of 32 codes: the row's 4 E8M0 scales, 2^(e - 127)
          // as the f32 of the bits e << 23 (exact; 0, 2^-127, reads as 0, as no f32 normal;
          // 255 NaN), times x's (which carry the integers' quarter: exact)
          %${p}kb = arith.divui %${p}k, %c16 : index
          %${p}sx = vector.load %xs[%${p}kb] : memref<${KB}xf32>, vector<4xf32>
          %${p}sw_codes = vector.load %ws[%n, %${p}kb] : memref<${N}x${KB}xi8>, vector<4xi8>
          %${p}sw_e = arith.extui %${p}sw_codes : vector<4xi8> to vector<4xi32>
          %${p}sw_bits = arith.shli %${p}sw_e, %e8m0_shift : vector<4xi32>
          %${p}sw_pow2 = arith.bitcast %${p}sw_bits : vector<4xi32> to vector<4xf32>
          %${p}sw_is_nan = arith.cmpi eq, %${p}sw_e, %e8m0_nan : vector<4xi32>
          %${p}sw = arith.select %${p}sw_is_nan, %nan4, %${p}sw_pow2 : vector<4xi1>, vector<4xf32>
          %${p}s = arith.mulf %${p}sx, %${p}sw : vector<4xf32>
