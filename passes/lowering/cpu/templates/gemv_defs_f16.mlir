      // snippet: reads; defines %f16_shift7:vector<32xi16> %f16_shift8:vector<32xi16> %f16_sign:vector<32xi16> %f16_magnitude:vector<32xi16> %f16_nan:vector<32xi16>
      // AVX2's E4M3 decode through f16 (gemv_e4m3_f16.mlir): shifts, the f16
      // sign bit, E4M3's magnitude bits in an f16 (0x3F80: also its NaN's), an f16 NaN
      %f16_shift7 = arith.constant dense<7> : vector<32xi16>
      %f16_shift8 = arith.constant dense<8> : vector<32xi16>
      %f16_sign = arith.constant dense<-32768> : vector<32xi16>
      %f16_magnitude = arith.constant dense<16256> : vector<32xi16>
      %f16_nan = arith.constant dense<32256> : vector<32xi16>
