          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32>; defines %${p}p_a:vector<16xf32> %${p}p_b:vector<16xf32>
          // 32 codes' products with x's (exact), summed in pairs into 16 lanes (lane i: codes i
          // and i + 16; an FMA adds the second product to the first))
          %${p}xa_lo = "vector.extract_strided_slice"(%${p}xa) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xa_hi = "vector.extract_strided_slice"(%${p}xa) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_lo = "vector.extract_strided_slice"(%${p}xb) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_hi = "vector.extract_strided_slice"(%${p}xb) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_lo = "vector.extract_strided_slice"(%${p}a) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_hi = "vector.extract_strided_slice"(%${p}a) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_lo = "vector.extract_strided_slice"(%${p}b) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_hi = "vector.extract_strided_slice"(%${p}b) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}pl_a = arith.mulf %${p}xa_lo, %${p}a_lo : vector<16xf32>
          %${p}p_a = vector.fma %${p}xa_hi, %${p}a_hi, %${p}pl_a : vector<16xf32>
          %${p}pl_b = arith.mulf %${p}xb_lo, %${p}b_lo : vector<16xf32>
          %${p}p_b = vector.fma %${p}xb_hi, %${p}b_hi, %${p}pl_b : vector<16xf32>
