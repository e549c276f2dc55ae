    // snippet: reads ${code}:i8 %table#0:tensor<256xf32> %table#1:tensor<256xf32> %table#2:tensor<256xi32>; defines %code_i32:i32 %code_index:index %s:f32 %s_sub:f32 %neg_lo:i32
    // the block's enc, enc_sub and neg_lo (nvfp4_block_table.mlir), by its scale code ${code}
    %code_i32 = arith.extui ${code} : i8 to i32
    %code_index = arith.index_cast %code_i32 : i32 to index
    %s = tensor.extract %table#0[%code_index] : tensor<256xf32>
    %s_sub = tensor.extract %table#1[%code_index] : tensor<256xf32>
    %neg_lo = tensor.extract %table#2[%code_index] : tensor<256xi32>
