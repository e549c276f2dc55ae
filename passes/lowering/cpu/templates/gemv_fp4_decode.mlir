          // snippet: reads %w:memref<${N}x${K}xi8> %x:memref<${XK}xbf16> %n:index %k:index %c32:index %c_odd:index %nibble:vector<64xi8> %four:vector<64xi8> %hi_table:vector<64xi8> %lo_table:vector<64xi8>; defines %${p}k:index %${p}xe0:vector<32xbf16> %${p}xe1:vector<32xbf16> %${p}xo0:vector<32xbf16> %${p}xo1:vector<32xbf16> %${p}e0:vector<32xbf16> %${p}e1:vector<32xbf16> %${p}o0:vector<32xbf16> %${p}o1:vector<32xbf16>
          // the row's 64 bytes at %k (128 E2M1 codes, the even element in each low nibble) as bf16
          // values from the 16-entry byte tables (vpermb: a code's value's high and low byte, its
          // sign included): the even elements (%${p}e0, %${p}e1) and the odd ones (%${p}o0,
          // %${p}o1), beside x's even and odd values (%x: its even elements, then its odd ones)
          %${p}offset = arith.constant ${offset} : index
          %${p}k = arith.addi %k, %${p}offset : index
          %${p}k32 = arith.addi %${p}k, %c32 : index
          %${p}ko = arith.addi %${p}k, %c_odd : index
          %${p}ko32 = arith.addi %${p}ko, %c32 : index
          %${p}xe0 = vector.load %x[%${p}k] : memref<${XK}xbf16>, vector<32xbf16>
          %${p}xe1 = vector.load %x[%${p}k32] : memref<${XK}xbf16>, vector<32xbf16>
          %${p}xo0 = vector.load %x[%${p}ko] : memref<${XK}xbf16>, vector<32xbf16>
          %${p}xo1 = vector.load %x[%${p}ko32] : memref<${XK}xbf16>, vector<32xbf16>
          %${p}bytes = vector.load %w[%n, %${p}k] : memref<${N}x${K}xi8>, vector<64xi8>
          %${p}even = arith.andi %${p}bytes, %nibble : vector<64xi8>
          %${p}high = arith.shrui %${p}bytes, %four : vector<64xi8>
          %${p}odd = arith.andi %${p}high, %nibble : vector<64xi8>
          %${p}even_hi = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%hi_table, %${p}even) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}even_lo = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%lo_table, %${p}even) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}odd_hi = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%hi_table, %${p}odd) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}odd_lo = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%lo_table, %${p}odd) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
          %${p}even_bytes = vector.shuffle %${p}even_lo, %${p}even_hi ${interleave} : vector<64xi8>, vector<64xi8>
          %${p}odd_bytes = vector.shuffle %${p}odd_lo, %${p}odd_hi ${interleave} : vector<64xi8>, vector<64xi8>
          %${p}evens = vector.bitcast %${p}even_bytes : vector<128xi8> to vector<64xbf16>
          %${p}odds = vector.bitcast %${p}odd_bytes : vector<128xi8> to vector<64xbf16>
          %${p}e0 = "vector.extract_strided_slice"(%${p}evens) <{offsets = [0], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
          %${p}e1 = "vector.extract_strided_slice"(%${p}evens) <{offsets = [32], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
          %${p}o0 = "vector.extract_strided_slice"(%${p}odds) <{offsets = [0], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
          %${p}o1 = "vector.extract_strided_slice"(%${p}odds) <{offsets = [32], sizes = [32], strides = [1]}> : (vector<64xbf16>) -> vector<32xbf16>
