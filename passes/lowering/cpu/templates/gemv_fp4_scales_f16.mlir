          // snippet: reads %${p}k:index %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %n:index %c8:index %magnitude:vector<8xi16> %seven:vector<8xi16>; defines %${p}s:vector<8xf32>
          // AVX2: the 64 bytes' 8 blocks of 16 codes: the row's 8 E4M3 block scales as f16s of
          // their bits (each code's sign and magnitude shifted left by 7 into an f16's sign,
          // exponent and mantissa: each value times 2^-8, subnormals included) times x's
          // (which carry the 2^8, and the integers' quarter: exact). No NaN here: a row
          // with a NaN scale is made NaN after the dispatch (gemv_nan_rows.mlir)
          %${p}kb = arith.divui %${p}k, %c8 : index
          %${p}sx = vector.load %xs[%${p}kb] : memref<${KB}xf32>, vector<8xf32>
          %${p}sw_codes = vector.load %ws[%n, %${p}kb] : memref<${N}x${KB}xi8>, vector<8xi8>
          %${p}sw_wide = arith.extui %${p}sw_codes : vector<8xi8> to vector<8xi16>
          %${p}sw_mag = arith.andi %${p}sw_wide, %magnitude : vector<8xi16>
          %${p}sw_bits = arith.shli %${p}sw_mag, %seven : vector<8xi16>
          %${p}sw_f16 = arith.bitcast %${p}sw_bits : vector<8xi16> to vector<8xf16>
          %${p}sw = arith.extf %${p}sw_f16 : vector<8xf16> to vector<8xf32>
          %${p}s = arith.mulf %${p}sx, %${p}sw : vector<8xf32>
