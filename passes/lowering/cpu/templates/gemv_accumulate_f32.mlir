          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32> ${acc_a}:vector<32xf32> ${acc_b}:vector<32xf32>; defines %${p}next_a:vector<32xf32> %${p}next_b:vector<32xf32>
          // per-tensor scales: the products (exact) summed into the accumulators (scaled after
          // the loop)
          %${p}next_a = vector.fma %${p}xa, %${p}a, ${acc_a} : vector<32xf32>
          %${p}next_b = vector.fma %${p}xb, %${p}b, ${acc_b} : vector<32xf32>
