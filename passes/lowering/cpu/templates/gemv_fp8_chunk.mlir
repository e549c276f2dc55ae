          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${K}xbf16> %n:index %k:index %c32:index ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32> %sign:vector<64xi8> %hi_lo_table:vector<64xi8> %hi_hi_table:vector<64xi8> %lo_lo_table:vector<64xi8> %lo_hi_table:vector<64xi8>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // the row's 64 codes at %k + ${offset}: their bf16 values from the byte tables, times x's 64
          %${p}offset = arith.constant ${offset} : index
          %${p}k = arith.addi %k, %${p}offset : index
          %${p}k32 = arith.addi %${p}k, %c32 : index
          %${p}xa = vector.load %x[%${p}k] : memref<${K}xbf16>, vector<32xbf16>
          %${p}xb = vector.load %x[%${p}k32] : memref<${K}xbf16>, vector<32xbf16>
          %${p}codes = vector.load %w[%n, %${p}k] : memref<${N}x${K}xi8>, vector<64xi8>
          %${p}hi_mag = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%hi_lo_table, %${p}codes, %hi_hi_table) : (vector<64xi8>, vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}lo = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%lo_lo_table, %${p}codes, %lo_hi_table) : (vector<64xi8>, vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}sign = arith.andi %${p}codes, %sign : vector<64xi8>
          %${p}hi = arith.ori %${p}hi_mag, %${p}sign : vector<64xi8>
          %${p}bytes = vector.shuffle %${p}lo, %${p}hi ${interleave} : vector<64xi8>, vector<64xi8>
          %${p}values = vector.bitcast %${p}bytes : vector<128xi8> to vector<64xbf16>
          %${p}a = "vector.extract_strided_slice"(%${p}values) <{offsets = [0], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
          %${p}b = "vector.extract_strided_slice"(%${p}values) <{offsets = [32], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
          %${p}next_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc_a}, %${p}xa, %${p}a) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}next_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc_b}, %${p}xb, %${p}b) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
