          // snippet: reads %${p}xa:vector<32xbf16> %${p}xb:vector<32xbf16> %${p}a:vector<32xbf16> %${p}b:vector<32xbf16> %zero:vector<16xf32>; defines %${p}p_a:vector<16xf32> %${p}p_b:vector<16xf32>
          // 32 codes' products with x's (exact), summed in pairs into 16 lanes (vdpbf16ps)
          %${p}p_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xa, %${p}a) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}p_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%zero, %${p}xb, %${p}b) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
