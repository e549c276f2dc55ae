      // snippet: reads; defines %sign:vector<64xi8> %hi_lo_table:vector<64xi8> %hi_hi_table:vector<64xi8> %lo_lo_table:vector<64xi8> %lo_hi_table:vector<64xi8>
      // AVX512-VBMI's FP8 decode (gemv_fp8_decode.mlir): the sign bit, and the high and the low
      // byte of each of the 128 magnitudes' bf16 values, as two 64-byte tables each
      %sign = arith.constant dense<-128> : vector<64xi8>
      %hi_lo_table = arith.constant dense<${hi0}> : vector<64xi8>
      %hi_hi_table = arith.constant dense<${hi1}> : vector<64xi8>
      %lo_lo_table = arith.constant dense<${lo0}> : vector<64xi8>
      %lo_hi_table = arith.constant dense<${lo1}> : vector<64xi8>
