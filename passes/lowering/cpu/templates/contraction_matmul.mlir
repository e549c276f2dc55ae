  // snippet: reads %a_f32:tensor<${a_shape}x${gemm}> %b_f32:tensor<${b_shape}x${gemm}> %acc_init:tensor<${out_shape}xf32>; defines %acc:tensor<${out_shape}xf32>; locals %a_op %b_op
  // %acc = %a_f32 @ %b_f32 (B read as [N, K] where its map says so) added to %acc_init, f32
  // products (of ${gemm} operands, widened) and sums, as a named linalg.matmul: IREE data-tiles it like the model's own matmuls
  // and fuses no neighbour into it (as a linalg.generic, MiniLM's Q/K/V projections took the
  // head transpose that follows them in and ran at 15 GFLOP/s).
  // Each decoded operand is a dispatch of its own (compute_barrier.start: no host wait): fused into
  // the data-tiling pack of its operand, IREE flattens the decode to 1-D and the pack runs 3-4x
  // slower than decode and pack apart (benchmarks/RESULTS.md).${a_barrier_dims}
  %a_op = iree_tensor_ext.compute_barrier.start %a_f32 : tensor<${a_shape}x${gemm}>${a_barrier_sizes} -> tensor<${a_shape}x${gemm}>${b_barrier_dims}
  %b_op = iree_tensor_ext.compute_barrier.start %b_f32 : tensor<${b_shape}x${gemm}>${b_barrier_sizes} -> tensor<${b_shape}x${gemm}>
  %acc = linalg.matmul indexing_maps = [${mm_a_map}, ${mm_b_map}, ${mm_out_map}]
      ins(%a_op, %b_op : tensor<${a_shape}x${gemm}>, tensor<${b_shape}x${gemm}>)
      outs(%acc_init : tensor<${out_shape}xf32>) -> tensor<${out_shape}xf32>
