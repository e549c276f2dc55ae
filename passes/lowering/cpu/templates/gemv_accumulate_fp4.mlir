          // snippet: reads %${p}k:index %${p}xe0:vector<32xbf16> %${p}xe1:vector<32xbf16> %${p}xo0:vector<32xbf16> %${p}xo1:vector<32xbf16> %${p}e0:vector<32xbf16> %${p}e1:vector<32xbf16> %${p}o0:vector<32xbf16> %${p}o1:vector<32xbf16> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32> %zero:vector<16xf32> %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %n:index %c8:index %magnitude:vector<8xi16> %seven:vector<8xi16> %scale_nan:vector<8xi16> %p8:vector<8xf32> %nan8:vector<8xf32>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // the 128 codes' 8 blocks of 16: the row's 8 E4M3 block scales decoded (through f16:
          // exact, subnormals included; 0x7F NaN) times x's, each 16 codes' products summed on
          // their own (4 lanes a block: a lane sums an even and an odd pair of one block) and
          // added times their block's scales (E2M1 x E2M1 sums and E4M3 x E4M3: exact in f32)
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
          %${p}s_a = vector.shuffle %${p}s, %${p}s [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<8xf32>, vector<8xf32>
          %${p}s_b = vector.shuffle %${p}s, %${p}s [4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7] : vector<8xf32>, vector<8xf32>
          %${p}pe_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xe0, %${p}e0) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}p_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%${p}pe_a, %${p}xo0, %${p}o0) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}pe_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xe1, %${p}e1) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}p_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%${p}pe_b, %${p}xo1, %${p}o1) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}next_a = vector.fma %${p}p_a, %${p}s_a, ${acc_a} : vector<16xf32>
          %${p}next_b = vector.fma %${p}p_b, %${p}s_b, ${acc_b} : vector<16xf32>
