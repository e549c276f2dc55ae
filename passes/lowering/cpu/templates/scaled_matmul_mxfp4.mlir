// scaled_matmul (MXFP4 operands): out = dequant(a) @ dequant(b), where dequant = E2M1 value *
// 2^(e - 127) of the block's E8M0 scale (exact in f32, and in bf16: the ${gemm} operands). The
// contraction runs over the padded K (${Kp}): padding encodes as zeros.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type},
                            %b: tensor<${b_shape}xi8>, %sb: ${sb_type})
    -> tensor<${M}x${N}xf32> attributes {${attrs}} {${m_defs}
${unswizzle_a}
${unswizzle_b}
${dequant_a}
${dequant_b}
  %zero = arith.constant 0.0 : f32
  %acc_empty = tensor.empty(${m}) : tensor<${M}x${N}xf32>
  %acc_init = linalg.fill ins(%zero : f32) outs(%acc_empty : tensor<${M}x${N}xf32>) -> tensor<${M}x${N}xf32>
${contraction}
  return %acc : tensor<${M}x${N}xf32>
}
