          // snippet: reads %${p}s:vector<4xf32> %${p}sum_a:vector<8xf32> %${p}sum_b:vector<8xf32> ${acc_a}:vector<8xf32> ${acc_b}:vector<8xf32>; defines %${p}next_a:vector<8xf32> %${p}next_b:vector<8xf32>
          // the 128 codes' 4 blocks of 32 (their scales %${p}s: gemv_mxfp4_scales_i8.mlir, x's a
          // quarter, for the sums' factor 4): each block's four lanes of exact sums added times
          // the block's scales into the 8-lane accumulators
          %${p}s_a = vector.shuffle %${p}s, %${p}s [0, 0, 0, 0, 1, 1, 1, 1] : vector<4xf32>, vector<4xf32>
          %${p}s_b = vector.shuffle %${p}s, %${p}s [2, 2, 2, 2, 3, 3, 3, 3] : vector<4xf32>, vector<4xf32>
          %${p}next_a = vector.fma %${p}sum_a, %${p}s_a, ${acc_a} : vector<8xf32>
          %${p}next_b = vector.fma %${p}sum_b, %${p}s_b, ${acc_b} : vector<8xf32>
