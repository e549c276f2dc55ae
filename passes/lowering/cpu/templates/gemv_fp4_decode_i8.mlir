          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${XK}xi8> %xo:memref<${LANES}xi32> %n:index %k:index %c4:index %c8:index %c32:index %c_odd:index %fp4_nibble:vector<32xi8> %fp4_four:vector<32xi8> %fp4_table:vector<32xi8> %fp4_ones:vector<16xi16>; defines %${p}k:index %${p}sum_a:vector<8xf32> %${p}sum_b:vector<8xf32>
          // the row's 64 bytes at %k (128 E2M1 codes, the even element in each low nibble) as
          // integers: each code's value times 2, plus 12, an unsigned byte (vpshufb over
          // %fp4_table: 0..24), times x's codes times 2 (signed bytes, -12..12; %x: its even
          // elements, then its odd ones) by vpmaddubsw (a pair's products summed in 16 bits: at
          // most 576, never saturated); the even and odd sums added, each 4 bytes' (8 codes')
          // summed in 32 bits (vpmaddwd by ones), less their offset's products (%xo: 12 times
          // those x integers' sum): each 4 bytes' exact sum of products times 4, as f32
          // (%${p}sum_a: bytes 0..31, 2 lanes a block of 16 codes; %${p}sum_b: bytes 32..63)
          %${p}offset = arith.constant ${offset} : index
          %${p}k = arith.addi %k, %${p}offset : index
          %${p}k32 = arith.addi %${p}k, %c32 : index
          %${p}ko = arith.addi %${p}k, %c_odd : index
          %${p}ko32 = arith.addi %${p}ko, %c32 : index
          %${p}l = arith.divui %${p}k, %c4 : index
          %${p}l8 = arith.addi %${p}l, %c8 : index
          %${p}bytes0 = vector.load %w[%n, %${p}k] : memref<${N}x${K}xi8>, vector<32xi8>
          %${p}bytes1 = vector.load %w[%n, %${p}k32] : memref<${N}x${K}xi8>, vector<32xi8>
          %${p}xe0 = vector.load %x[%${p}k] : memref<${XK}xi8>, vector<32xi8>
          %${p}xe1 = vector.load %x[%${p}k32] : memref<${XK}xi8>, vector<32xi8>
          %${p}xo0 = vector.load %x[%${p}ko] : memref<${XK}xi8>, vector<32xi8>
          %${p}xo1 = vector.load %x[%${p}ko32] : memref<${XK}xi8>, vector<32xi8>
          %${p}off0 = vector.load %xo[%${p}l] : memref<${LANES}xi32>, vector<8xi32>
          %${p}off1 = vector.load %xo[%${p}l8] : memref<${LANES}xi32>, vector<8xi32>
          %${p}even0 = arith.andi %${p}bytes0, %fp4_nibble : vector<32xi8>
          %${p}high0 = arith.shrui %${p}bytes0, %fp4_four : vector<32xi8>
          %${p}odd0 = arith.andi %${p}high0, %fp4_nibble : vector<32xi8>
          %${p}even1 = arith.andi %${p}bytes1, %fp4_nibble : vector<32xi8>
          %${p}high1 = arith.shrui %${p}bytes1, %fp4_four : vector<32xi8>
          %${p}odd1 = arith.andi %${p}high1, %fp4_nibble : vector<32xi8>
          %${p}we0 = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%fp4_table, %${p}even0) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
          %${p}wo0 = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%fp4_table, %${p}odd0) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
          %${p}we1 = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%fp4_table, %${p}even1) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
          %${p}wo1 = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%fp4_table, %${p}odd1) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
          %${p}pe0 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%${p}we0, %${p}xe0) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
          %${p}po0 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%${p}wo0, %${p}xo0) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
          %${p}pe1 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%${p}we1, %${p}xe1) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
          %${p}po1 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%${p}wo1, %${p}xo1) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
          %${p}p0 = arith.addi %${p}pe0, %${p}po0 : vector<16xi16>
          %${p}p1 = arith.addi %${p}pe1, %${p}po1 : vector<16xi16>
          %${p}q0 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%${p}p0, %fp4_ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
          %${p}q1 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%${p}p1, %fp4_ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
          %${p}r0 = arith.subi %${p}q0, %${p}off0 : vector<8xi32>
          %${p}r1 = arith.subi %${p}q1, %${p}off1 : vector<8xi32>
          %${p}sum_a = arith.sitofp %${p}r0 : vector<8xi32> to vector<8xf32>
          %${p}sum_b = arith.sitofp %${p}r1 : vector<8xi32> to vector<8xf32>
