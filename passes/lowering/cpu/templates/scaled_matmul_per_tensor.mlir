// scaled_matmul (per-tensor FP8 operands): out = (decode(a) @ decode(b)) * (a_scale_inv * b_scale_inv),
// products and sums in f32 (exact products: FP8 values are exact in f32 and in bf16, the ${gemm} operands).
func.func private @${name}(%a: tensor<${a_shape}xi8>, %a_scale_inv: tensor<f32>,
                            %b: tensor<${b_shape}xi8>, %b_scale_inv: tensor<f32>)
    -> tensor<${out_shape}xf32> attributes {${attrs}} {${a_dims_defs}
  %a_empty = tensor.empty(${a_sizes}) : tensor<${a_shape}x${gemm}>
  %a_f32 = linalg.generic {
      indexing_maps = [affine_map<(${a_dims}) -> (${a_dims})>, affine_map<(${a_dims}) -> (${a_dims})>],
      iterator_types = [${a_parallels}]}
      ins(%a : tensor<${a_shape}xi8>) outs(%a_empty : tensor<${a_shape}x${gemm}>) {
  ^bb0(%a_code: i8, %out: ${gemm}):
${decode_a}${narrow_a}
    linalg.yield ${a_yield} : ${gemm}
  } -> tensor<${a_shape}x${gemm}>
  %b_empty = tensor.empty(${b_sizes}) : tensor<${b_shape}x${gemm}>
  %b_f32 = linalg.generic {
      indexing_maps = [affine_map<(${b_dims}) -> (${b_dims})>, affine_map<(${b_dims}) -> (${b_dims})>],
      iterator_types = [${b_parallels}]}
      ins(%b : tensor<${b_shape}xi8>) outs(%b_empty : tensor<${b_shape}x${gemm}>) {
  ^bb0(%b_code: i8, %out: ${gemm}):
${decode_b}${narrow_b}
    linalg.yield ${b_yield} : ${gemm}
  } -> tensor<${b_shape}x${gemm}>
  %zero = arith.constant 0.0 : f32
  %acc_empty = tensor.empty(${out_sizes}) : tensor<${out_shape}xf32>
  %acc_init = linalg.fill ins(%zero : f32) outs(%acc_empty : tensor<${out_shape}xf32>) -> tensor<${out_shape}xf32>
${contraction}
  %out_empty = tensor.empty(${out_sizes}) : tensor<${out_shape}xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(${out_dims}) -> (${out_dims})>, affine_map<(${out_dims}) -> ()>,
                       affine_map<(${out_dims}) -> ()>, affine_map<(${out_dims}) -> (${out_dims})>],
      iterator_types = [${out_parallels}]}
      ins(%acc, %a_scale_inv, %b_scale_inv : tensor<${out_shape}xf32>, tensor<f32>, tensor<f32>)
      outs(%out_empty : tensor<${out_shape}xf32>) {
  ^bb0(%v: f32, %sa: f32, %sb: f32, %o: f32):
    %alpha = arith.mulf %sa, %sb : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
