// scaled_matmul (block-scaled operands, ${scale_format} scales in the ${layout} layout):
// out = dequantize(a) @ dequantize(b), f32 products and sums. Each element is dequantized as
// FP8 value * its block scale (exact for power-of-two scales, one f32 rounding otherwise), as ${gemm}.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type},
                            %b: tensor<${b_shape}xi8>, %sb: ${sb_type})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {${m_defs}
${unswizzle_a}
${unswizzle_b}
  %a_empty = tensor.empty(${m}) : tensor<${a_shape}x${gemm}>
  %a_f32 = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<${a_shape}xi8>) outs(%a_empty : tensor<${a_shape}x${gemm}>) {
  ^bb0(%a_code: i8, %out: ${gemm}):
${dequant_a}${narrow_a}
    linalg.yield ${a_yield} : ${gemm}
  } -> tensor<${a_shape}x${gemm}>
  %b_empty = tensor.empty() : tensor<${b_shape}x${gemm}>
  %b_f32 = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<${b_shape}xi8>) outs(%b_empty : tensor<${b_shape}x${gemm}>) {
  ^bb0(%b_code: i8, %out: ${gemm}):
${dequant_b}${narrow_b}
    linalg.yield ${b_yield} : ${gemm}
  } -> tensor<${b_shape}x${gemm}>
  %zero = arith.constant 0.0 : f32
  %acc_empty = tensor.empty(${m}) : tensor<${out_shape}xf32>
  %acc_init = linalg.fill ins(%zero : f32) outs(%acc_empty : tensor<${out_shape}xf32>) -> tensor<${out_shape}xf32>
${contraction}
  return %acc : tensor<${out_shape}xf32>
}
