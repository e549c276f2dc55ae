          // snippet: reads %${p}s:vector<8xf32> %${p}xe0:vector<32xbf16> %${p}xe1:vector<32xbf16> %${p}xo0:vector<32xbf16> %${p}xo1:vector<32xbf16> %${p}e0:vector<32xbf16> %${p}e1:vector<32xbf16> %${p}o0:vector<32xbf16> %${p}o1:vector<32xbf16> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32> %zero:vector<16xf32>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // the 128 codes' 8 blocks of 16 (their scales %${p}s: gemv_fp4_scales.mlir), each 16
          // codes' products summed on their own (4 lanes a block: a lane sums an even and an odd
          // pair of one block) and added times their block's scales (E2M1 x E2M1 sums: exact)
          %${p}s_a = vector.shuffle %${p}s, %${p}s [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<8xf32>, vector<8xf32>
          %${p}s_b = vector.shuffle %${p}s, %${p}s [4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7] : vector<8xf32>, vector<8xf32>
          %${p}pe_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xe0, %${p}e0) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}p_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%${p}pe_a, %${p}xo0, %${p}o0) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}pe_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xe1, %${p}e1) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}p_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%${p}pe_b, %${p}xo1, %${p}o1) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}next_a = vector.fma %${p}p_a, %${p}s_a, ${acc_a} : vector<16xf32>
          %${p}next_b = vector.fma %${p}p_b, %${p}s_b, ${acc_b} : vector<16xf32>
