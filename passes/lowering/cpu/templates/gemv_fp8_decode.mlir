          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${K}xbf16> %n:index %k:index %c32:index %sign:vector<64xi8> %hi_lo_table:vector<64xi8> %hi_hi_table:vector<64xi8> %lo_lo_table:vector<64xi8> %lo_hi_table:vector<64xi8>; defines %${p}k:index %${p}k32:index %${p}xa:vector<32xbf16> %${p}xb:vector<32xbf16> %${p}a:vector<32xbf16> %${p}b:vector<32xbf16>
          // the row's 64 codes at %k + ${offset} as bf16 values from the byte tables (%${p}a, %${p}b:
          // codes 0..31 and 32..63), and x's 64 values beside them (%${p}xa, %${p}xb)
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
