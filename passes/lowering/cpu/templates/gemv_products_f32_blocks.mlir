          // snippet: reads %${p}xa:vector<32xf32> %${p}xb:vector<32xf32> %${p}a:vector<32xf32> %${p}b:vector<32xf32>; defines %${p}p_a:vector<8xf32> %${p}p_b:vector<8xf32>
          // mxfp8's two blocks of 32 codes: each block's products with x's (exact) summed into 8
          // lanes (lane i: codes i, i + 8, i + 16 and i + 24; a multiply, then three FMAs)
          %${p}xa0 = "vector.extract_strided_slice"(%${p}xa) <{offsets = [0], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xa1 = "vector.extract_strided_slice"(%${p}xa) <{offsets = [8], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xa2 = "vector.extract_strided_slice"(%${p}xa) <{offsets = [16], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xa3 = "vector.extract_strided_slice"(%${p}xa) <{offsets = [24], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xb0 = "vector.extract_strided_slice"(%${p}xb) <{offsets = [0], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xb1 = "vector.extract_strided_slice"(%${p}xb) <{offsets = [8], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xb2 = "vector.extract_strided_slice"(%${p}xb) <{offsets = [16], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}xb3 = "vector.extract_strided_slice"(%${p}xb) <{offsets = [24], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}a0 = "vector.extract_strided_slice"(%${p}a) <{offsets = [0], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}a1 = "vector.extract_strided_slice"(%${p}a) <{offsets = [8], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}a2 = "vector.extract_strided_slice"(%${p}a) <{offsets = [16], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}a3 = "vector.extract_strided_slice"(%${p}a) <{offsets = [24], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}b0 = "vector.extract_strided_slice"(%${p}b) <{offsets = [0], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}b1 = "vector.extract_strided_slice"(%${p}b) <{offsets = [8], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}b2 = "vector.extract_strided_slice"(%${p}b) <{offsets = [16], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}b3 = "vector.extract_strided_slice"(%${p}b) <{offsets = [24], sizes = [8], strides = [1]}> : (vector<32xf32>) -> vector<8xf32>
          %${p}pa0 = arith.mulf %${p}xa0, %${p}a0 : vector<8xf32>
          %${p}pa1 = vector.fma %${p}xa1, %${p}a1, %${p}pa0 : vector<8xf32>
          %${p}pa2 = vector.fma %${p}xa2, %${p}a2, %${p}pa1 : vector<8xf32>
          %${p}p_a = vector.fma %${p}xa3, %${p}a3, %${p}pa2 : vector<8xf32>
          %${p}pb0 = arith.mulf %${p}xb0, %${p}b0 : vector<8xf32>
          %${p}pb1 = vector.fma %${p}xb1, %${p}b1, %${p}pb0 : vector<8xf32>
          %${p}pb2 = vector.fma %${p}xb2, %${p}b2, %${p}pb1 : vector<8xf32>
          %${p}p_b = vector.fma %${p}xb3, %${p}b3, %${p}pb2 : vector<8xf32>
