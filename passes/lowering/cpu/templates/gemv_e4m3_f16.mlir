          // snippet: reads ${codes}:vector<32xi8> %f16_shift7:vector<32xi16> %f16_sign_magnitude:vector<32xi16>; defines %${out}:vector<32xf32>
          // 32 E4M3 codes as f32 through f16 (vcvtph2ps): each code sign-extended to 16 bits and
          // shifted left by 7 puts its magnitude at the f16's exponent and mantissa top (bits
          // 7..13: the code's value times 2^-8, f16 subnormals included, both biases differing
          // by 8) and its sign at bit 15 (bit 14 cleared). Exact for every code but NaN's
          // (magnitude 0x7F, read as 480 x 2^-8): a row holding one is made NaN after the loop
          // (gemv_nan_rows.mlir). x carries the 2^8.
          %${p}wide = arith.extsi ${codes} : vector<32xi8> to vector<32xi16>
          %${p}shifted = arith.shli %${p}wide, %f16_shift7 : vector<32xi16>
          %${p}bits = arith.andi %${p}shifted, %f16_sign_magnitude : vector<32xi16>
          %${p}half = arith.bitcast %${p}bits : vector<32xi16> to vector<32xf16>
          %${out} = arith.extf %${p}half : vector<32xf16> to vector<32xf32>
