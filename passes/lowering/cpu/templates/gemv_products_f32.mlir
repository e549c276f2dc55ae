          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32>; defines %${p}p_a:vector<32xf32> %${p}p_b:vector<32xf32>
          // 32 codes' products with x's, one a lane (exact)
          %${p}p_a = arith.mulf %${p}xa, %${p}a : vector<32xf32>
          %${p}p_b = arith.mulf %${p}xb, %${p}b : vector<32xf32>
