          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${XK}xf32> %n:index %k:index %c32:index %c_odd:index %fp4_even_mag:vector<32xi16> %fp4_even_sign:vector<32xi16> %fp4_odd_mag:vector<32xi16> %fp4_odd_sign:vector<32xi16> %fp4_magnitude:vector<32xi16> %f16_sign:vector<32xi16>; defines %${p}k:index %${p}xe0:vector<32xf32> %${p}xe1:vector<32xf32> %${p}xo0:vector<32xf32> %${p}xo1:vector<32xf32> %${p}e0:vector<32xf32> %${p}e1:vector<32xf32> %${p}o0:vector<32xf32> %${p}o1:vector<32xf32>; holes decode_e0 decode_o0 decode_e1 decode_o1
          // the row's 64 bytes at %k (128 E2M1 codes, the even element in each low nibble) as
          // f32 through f16 (gemv_e2m1_f16.mlir: each code's value times 2^-14): the even
          // elements (%${p}e0, %${p}e1: bytes 0..31, 32..63) and the odd ones (%${p}o0,
          // %${p}o1), beside x's even and odd values (times 2^14; %x: its even elements, then
          // its odd ones)
          %${p}offset = arith.constant ${offset} : index
          %${p}k = arith.addi %k, %${p}offset : index
          %${p}k32 = arith.addi %${p}k, %c32 : index
          %${p}ko = arith.addi %${p}k, %c_odd : index
          %${p}ko32 = arith.addi %${p}ko, %c32 : index
          %${p}xe0 = vector.load %x[%${p}k] : memref<${XK}xf32>, vector<32xf32>
          %${p}xe1 = vector.load %x[%${p}k32] : memref<${XK}xf32>, vector<32xf32>
          %${p}xo0 = vector.load %x[%${p}ko] : memref<${XK}xf32>, vector<32xf32>
          %${p}xo1 = vector.load %x[%${p}ko32] : memref<${XK}xf32>, vector<32xf32>
          %${p}bytes0 = vector.load %w[%n, %${p}k] : memref<${N}x${K}xi8>, vector<32xi8>
          %${p}bytes1 = vector.load %w[%n, %${p}k32] : memref<${N}x${K}xi8>, vector<32xi8>
          %${p}wide0 = arith.extui %${p}bytes0 : vector<32xi8> to vector<32xi16>
          %${p}wide1 = arith.extui %${p}bytes1 : vector<32xi8> to vector<32xi16>
${decode_e0}
${decode_o0}
${decode_e1}
${decode_o1}
