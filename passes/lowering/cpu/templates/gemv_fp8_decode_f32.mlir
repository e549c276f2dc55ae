          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${K}xf32> %n:index %k:index %c32:index %f32_shift20:vector<32xi32> %f32_sign_magnitude:vector<32xi32>; defines %${p}k:index %${p}k32:index %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32>; holes decode_a decode_b
          // the row's 64 E4M3 codes at %k + ${offset} as f32 (%${p}a, %${p}b: codes 0..31 and
          // 32..63, each code's value times 2^-120: gemv_e4m3_f32.mlir), and x's 64 values
          // beside them (%${p}xa, %${p}xb: times 2^112)
          %${p}offset = arith.constant ${offset} : index
          %${p}k = arith.addi %k, %${p}offset : index
          %${p}k32 = arith.addi %${p}k, %c32 : index
          %${p}xa = vector.load %x[%${p}k] : memref<${K}xf32>, vector<32xf32>
          %${p}xb = vector.load %x[%${p}k32] : memref<${K}xf32>, vector<32xf32>
          %${p}codes_a = vector.load %w[%n, %${p}k] : memref<${N}x${K}xi8>, vector<32xi8>
          %${p}codes_b = vector.load %w[%n, %${p}k32] : memref<${N}x${K}xi8>, vector<32xi8>
${decode_a}
${decode_b}
