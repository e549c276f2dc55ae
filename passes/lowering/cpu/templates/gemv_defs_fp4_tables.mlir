      // snippet: reads; defines %nibble:vector<64xi8> %four:vector<64xi8> %hi_table:vector<64xi8> %lo_table:vector<64xi8>
      // AVX512-VBMI's E2M1 decode (gemv_fp4_decode.mlir): a nibble's mask and shift, the codes'
      // bf16 bytes (16 entries: 0, 0.5, 1, 1.5, 2, 3, 4, 6, then their negatives)
      %nibble = arith.constant dense<15> : vector<64xi8>
      %four = arith.constant dense<4> : vector<64xi8>
      %hi_table = arith.constant dense<${fp4_hi}> : vector<64xi8>
      %lo_table = arith.constant dense<${fp4_lo}> : vector<64xi8>
