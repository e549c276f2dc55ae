          // snippet: reads ${codes}:vector<32xi8> %f32_shift20:vector<32xi32> %f32_sign_magnitude:vector<32xi32>; defines %${out}:vector<32xf32>
          // 32 E4M3 codes as f32 bits: each code sign-extended to 32 bits and shifted left by 20
          // puts its magnitude at the f32's exponent and mantissa bottom (bits 20..26: the
          // code's value times 2^-120, its subnormals f32 subnormals) and its sign at bit 31
          // (bits 27..30 cleared). Exact for every code but NaN's (magnitude 0x7F, read as 480 x
          // 2^-120): a row holding one is made NaN after the loop (gemv_nan_rows.mlir). x
          // carries 2^112, the sums 2^-8 (taken back by %f32_factor). Needs DAZ off
          // (gemv_defs_f32.mlir).
          %${p}wide = arith.extsi ${codes} : vector<32xi8> to vector<32xi32>
          %${p}shifted = arith.shli %${p}wide, %f32_shift20 : vector<32xi32>
          %${p}bits = arith.andi %${p}shifted, %f32_sign_magnitude : vector<32xi32>
          %${out} = arith.bitcast %${p}bits : vector<32xi32> to vector<32xf32>
