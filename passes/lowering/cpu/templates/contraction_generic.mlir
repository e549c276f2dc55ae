  // snippet: reads %a_f32:tensor<${a_shape}xf32> %b_f32:tensor<${b_shape}xf32> %acc_init:tensor<${out_shape}xf32>; defines %acc:tensor<${out_shape}xf32>; locals %x %y %s %p %t
  // %acc = %a_f32 @ %b_f32 added to %acc_init, f32 products and sums, for N-D or batched
  // operands (contraction_matmul.mlir is the 2-D one).
  %acc = linalg.generic {
      indexing_maps = [${mm_a_map}, ${mm_b_map}, ${mm_out_map}],
      iterator_types = [${mm_iterators}]}
      ins(%a_f32, %b_f32 : tensor<${a_shape}xf32>, tensor<${b_shape}xf32>)
      outs(%acc_init : tensor<${out_shape}xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<${out_shape}xf32>
