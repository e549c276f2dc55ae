// scaled_matmul (block-scaled operands, ${scale_format} scales in the ${layout} layout):
// out = dequantize(a) @ dequantize(b), f32 products and sums. Each element is dequantized as
// FP8 value * its block scale (exact for power-of-two scales, one f32 rounding otherwise), as ${gemm}.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type},
                            %b: tensor<${b_shape}xi8>, %sb: ${sb_type})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {${m_defs}
${unswizzle_a}
${unswizzle_b}
${decode_a}
${decode_b}
  %zero = arith.constant 0.0 : f32
  %acc_empty = tensor.empty(${m}) : tensor<${out_shape}xf32>
  %acc_init = linalg.fill ins(%zero : f32) outs(%acc_empty : tensor<${out_shape}xf32>) -> tensor<${out_shape}xf32>
${contraction}
  return %acc : tensor<${out_shape}xf32>
}
