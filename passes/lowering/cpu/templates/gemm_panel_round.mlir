// snippet: reads %${p}prod:vector<64xf32>; defines %${p}scaled:vector<64xbf16>
            // the 64 products rounded to bf16 by vcvtne2ps2bf16, 32 an instruction (to nearest,
            // ties to even: exact here, each product a bf16 value; one below 2^-126, which the
            // instruction flushes to zero where arith.truncf would keep it, the GEMM's vdpbf16ps
            // reads as zero either way)
            %${p}q0 = "vector.extract_strided_slice"(%${p}prod) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<64xf32>) -> vector<16xf32>
            %${p}q1 = "vector.extract_strided_slice"(%${p}prod) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<64xf32>) -> vector<16xf32>
            %${p}q2 = "vector.extract_strided_slice"(%${p}prod) <{offsets = [32], sizes = [16], strides = [1]}> : (vector<64xf32>) -> vector<16xf32>
            %${p}q3 = "vector.extract_strided_slice"(%${p}prod) <{offsets = [48], sizes = [16], strides = [1]}> : (vector<64xf32>) -> vector<16xf32>
            %${p}bf_lo = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%${p}q1, %${p}q0) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
            %${p}bf_hi = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%${p}q3, %${p}q2) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
            %${p}scaled = vector.shuffle %${p}bf_lo, %${p}bf_hi ${concat} : vector<32xbf16>, vector<32xbf16>
