          // snippet: reads %${p}s:vector<8xf32> %${p}xe0:vector<32xf32> %${p}xe1:vector<32xf32> %${p}xo0:vector<32xf32> %${p}xo1:vector<32xf32> %${p}e0:vector<32xf32> %${p}e1:vector<32xf32> %${p}o0:vector<32xf32> %${p}o1:vector<32xf32> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // the 128 codes' 8 blocks of 16 (their scales %${p}s: gemv_fp4_scales.mlir): a lane
          // sums an even and an odd code's products of one block (8 lanes a block; exact), added
          // times its block's scales into the 16-lane accumulators
          %${p}pe_a = arith.mulf %${p}xe0, %${p}e0 : vector<32xf32>
          %${p}p_a = vector.fma %${p}xo0, %${p}o0, %${p}pe_a : vector<32xf32>
          %${p}pe_b = arith.mulf %${p}xe1, %${p}e1 : vector<32xf32>
          %${p}p_b = vector.fma %${p}xo1, %${p}o1, %${p}pe_b : vector<32xf32>
          %${p}p_a_lo = "vector.extract_strided_slice"(%${p}p_a) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}p_a_hi = "vector.extract_strided_slice"(%${p}p_a) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}p_b_lo = "vector.extract_strided_slice"(%${p}p_b) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}p_b_hi = "vector.extract_strided_slice"(%${p}p_b) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}s0 = vector.shuffle %${p}s, %${p}s [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] : vector<8xf32>, vector<8xf32>
          %${p}s1 = vector.shuffle %${p}s, %${p}s [2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3] : vector<8xf32>, vector<8xf32>
          %${p}s2 = vector.shuffle %${p}s, %${p}s [4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5] : vector<8xf32>, vector<8xf32>
          %${p}s3 = vector.shuffle %${p}s, %${p}s [6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7] : vector<8xf32>, vector<8xf32>
          %${p}half_a = vector.fma %${p}p_a_lo, %${p}s0, ${acc_a} : vector<16xf32>
          %${p}next_a = vector.fma %${p}p_a_hi, %${p}s1, %${p}half_a : vector<16xf32>
          %${p}half_b = vector.fma %${p}p_b_lo, %${p}s2, ${acc_b} : vector<16xf32>
          %${p}next_b = vector.fma %${p}p_b_hi, %${p}s3, %${p}half_b : vector<16xf32>
