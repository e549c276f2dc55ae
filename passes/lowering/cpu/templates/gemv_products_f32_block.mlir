          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32>; defines %${p}p:vector<16xf32>
          // 64 codes of one K block (fp8-block's blocks of 128 hold whole loop steps): their
          // products with x's (exact) summed into 16 lanes (lane i: codes i, i + 16, i + 32 and
          // i + 48; a multiply, then FMAs)
          %${p}xa_lo = "vector.extract_strided_slice"(%${p}xa) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xa_hi = "vector.extract_strided_slice"(%${p}xa) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_lo = "vector.extract_strided_slice"(%${p}xb) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}xb_hi = "vector.extract_strided_slice"(%${p}xb) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_lo = "vector.extract_strided_slice"(%${p}a) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}a_hi = "vector.extract_strided_slice"(%${p}a) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_lo = "vector.extract_strided_slice"(%${p}b) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}b_hi = "vector.extract_strided_slice"(%${p}b) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xf32>) -> vector<16xf32>
          %${p}p0 = arith.mulf %${p}xa_lo, %${p}a_lo : vector<16xf32>
          %${p}p1 = vector.fma %${p}xa_hi, %${p}a_hi, %${p}p0 : vector<16xf32>
          %${p}p2 = vector.fma %${p}xb_lo, %${p}b_lo, %${p}p1 : vector<16xf32>
          %${p}p = vector.fma %${p}xb_hi, %${p}b_hi, %${p}p2 : vector<16xf32>
