          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32>; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // per-tensor scales: the products (exact) summed into the 16-lane accumulators, two
          // FMAs each (scaled after the loop)
          %${p}xa_lo = "vector.extract_strided_slice"(%${p}xa) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xa_hi = "vector.extract_strided_slice"(%${p}xa) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_lo = "vector.extract_strided_slice"(%${p}xb) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_hi = "vector.extract_strided_slice"(%${p}xb) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_lo = "vector.extract_strided_slice"(%${p}a) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_hi = "vector.extract_strided_slice"(%${p}a) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_lo = "vector.extract_strided_slice"(%${p}b) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_hi = "vector.extract_strided_slice"(%${p}b) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}half_a = vector.fma %${p}xa_lo, %${p}a_lo, ${acc_a} : vector<16xf32>
          %${p}next_a = vector.fma %${p}xa_hi, %${p}a_hi, %${p}half_a : vector<16xf32>
          %${p}half_b = vector.fma %${p}xb_lo, %${p}b_lo, ${acc_b} : vector<16xf32>
          %${p}next_b = vector.fma %${p}xb_hi, %${p}b_hi, %${p}half_b : vector<16xf32>
