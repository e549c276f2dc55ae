      // snippet: reads; defines %fp4_even_mag:vector<32xi16> %fp4_even_sign:vector<32xi16> %fp4_odd_mag:vector<32xi16> %fp4_odd_sign:vector<32xi16> %fp4_magnitude:vector<32xi16> %f16_sign:vector<32xi16>
      // AVX2's E2M1 decode through f16 (gemv_e2m1_f16.mlir): the shifts that move a byte's low
      // and high nibble's magnitude to bits 9..11 and its sign to bit 15; those bits' masks
      %fp4_even_mag = arith.constant dense<9> : vector<32xi16>
      %fp4_even_sign = arith.constant dense<12> : vector<32xi16>
      %fp4_odd_mag = arith.constant dense<5> : vector<32xi16>
      %fp4_odd_sign = arith.constant dense<8> : vector<32xi16>
      %fp4_magnitude = arith.constant dense<3584> : vector<32xi16>
      %f16_sign = arith.constant dense<-32768> : vector<32xi16>
