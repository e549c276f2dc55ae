      // snippet: reads; defines %f16_shift7:vector<32xi16> %f16_sign_magnitude:vector<32xi16> %f16_magnitude:vector<32xi16> %f16_round:vector<32xi16> %f16_nan_bit:vector<32xi16>
      // AVX2's E4M3 decode through f16 (gemv_e4m3_f16.mlir): the shift, the f16 sign and
      // E4M3's magnitude bits (0xBF80), the magnitude bits alone (0x3F80), the carry that
      // only magnitude 0x7F's bits reach bit 14 with (0x80), that bit (0x4000)
      %f16_shift7 = arith.constant dense<7> : vector<32xi16>
      %f16_sign_magnitude = arith.constant dense<-16512> : vector<32xi16>
      %f16_magnitude = arith.constant dense<16256> : vector<32xi16>
      %f16_round = arith.constant dense<128> : vector<32xi16>
      %f16_nan_bit = arith.constant dense<16384> : vector<32xi16>
