      // snippet: reads; defines %f16_shift7:vector<32xi16> %f16_sign_magnitude:vector<32xi16>
      // AVX2's E4M3 decode through f16 (gemv_e4m3_f16.mlir): the shift, the f16 sign and
      // E4M3's magnitude bits (0xBF80)
      %f16_shift7 = arith.constant dense<7> : vector<32xi16>
      %f16_sign_magnitude = arith.constant dense<-16512> : vector<32xi16>
