          // snippet: reads %${p}k:index %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %n:index %c8:index %magnitude:vector<8xi16> %seven:vector<8xi16> %scale_nan:vector<8xi16> %p8:vector<8xf32> %nan8:vector<8xf32>; defines %${p}s:vector<8xf32>
          // the 64 bytes' 8 blocks of 16 codes: the row's 8 E4M3 block scales decoded (through
          // f16: exact, subnormals included; 0x7F NaN) times x's (E4M3 x E4M3: exact in f32)
          %${p}kb = arith.divui %${p}k, %c8 : index
          %${p}sx = vector.load %xs[%${p}kb] : memref<${KB}xf32>, vector<8xf32>
          %${p}sw_codes = vector.load %ws[%n, %${p}kb] : memref<${N}x${KB}xi8>, vector<8xi8>
          %${p}sw_wide = arith.extui %${p}sw_codes : vector<8xi8> to vector<8xi16>
          %${p}sw_mag = arith.andi %${p}sw_wide, %magnitude : vector<8xi16>
          %${p}sw_bits = arith.shli %${p}sw_mag, %seven : vector<8xi16>
          %${p}sw_f16 = arith.bitcast %${p}sw_bits : vector<8xi16> to vector<8xf16>
          %${p}sw_f32 = arith.extf %${p}sw_f16 : vector<8xf16> to vector<8xf32>
          %${p}sw_val = arith.mulf %${p}sw_f32, %p8 : vector<8xf32>
          %${p}sw_is_nan = arith.cmpi eq, %${p}sw_mag, %scale_nan : vector<8xi16>
          %${p}sw = arith.select %${p}sw_is_nan, %nan8, %${p}sw_val : vector<8xi1>, vector<8xf32>
          %${p}s = arith.mulf %${p}sx, %${p}sw : vector<8xf32>
