  // snippet: reads %a_f32:tensor<${a_shape}x${gemm}> %b_f32:tensor<${b_shape}x${gemm}> %acc_init:tensor<${out_shape}xf32>; defines %acc:tensor<${out_shape}xf32>
  // %acc = %a_f32 @ %b_f32 (B read as [N, K] where its map says so) added to %acc_init, f32
  // products (of ${gemm} operands, widened) and sums, as a named linalg.matmul: IREE data-tiles it like the model's own matmuls
  // and fuses no neighbour into it (as a linalg.generic, MiniLM's Q/K/V projections took the
  // head transpose that follows them in and ran at 15 GFLOP/s).
  %acc = linalg.matmul indexing_maps = [${mm_a_map}, ${mm_b_map}, ${mm_out_map}]
      ins(%a_f32, %b_f32 : tensor<${a_shape}x${gemm}>, tensor<${b_shape}x${gemm}>)
      outs(%acc_init : tensor<${out_shape}xf32>) -> tensor<${out_shape}xf32>
