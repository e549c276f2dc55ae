          // snippet: reads %${p}xa:vector<32xbf16> %${p}xb:vector<32xbf16> %${p}a:vector<32xbf16> %${p}b:vector<32xbf16> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // per-tensor scales: the products summed into the accumulators (scaled after the loop)
          %${p}next_a = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc_a}, %${p}xa, %${p}a) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
          %${p}next_b = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc_b}, %${p}xb, %${p}b) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
