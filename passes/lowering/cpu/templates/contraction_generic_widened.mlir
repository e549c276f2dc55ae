  // snippet: reads %a_f32:tensor<${a_shape}x${gemm}> %b_f32:tensor<${b_shape}x${gemm}> %acc_init:tensor<${out_shape}xf32>; defines %acc:tensor<${out_shape}xf32>; locals %x %y %s %xw %yw %p %t
  // %acc = %a_f32 @ %b_f32 added to %acc_init for N-D or batched operands of a narrower type
  // (${gemm}, exact for the decoded values: passes/gemm_operands.py), each widened to f32 for an
  // exact f32 product, f32 sums (contraction_generic.mlir is the f32 one).
  %acc = linalg.generic {
      indexing_maps = [${mm_a_map}, ${mm_b_map}, ${mm_out_map}],
      iterator_types = [${mm_iterators}]}
      ins(%a_f32, %b_f32 : tensor<${a_shape}x${gemm}>, tensor<${b_shape}x${gemm}>)
      outs(%acc_init : tensor<${out_shape}xf32>) {
  ^bb0(%x: ${gemm}, %y: ${gemm}, %s: f32):
    %xw = arith.extf %x : ${gemm} to f32
    %yw = arith.extf %y : ${gemm} to f32
    %p = arith.mulf %xw, %yw : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<${out_shape}xf32>
