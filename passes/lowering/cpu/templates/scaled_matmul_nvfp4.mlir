// scaled_matmul (NVFP4 operands): out = (dequant(a) @ dequant(b)) * (S_dec_a * S_dec_b), where
// dequant = E2M1 value * E4M3 block scale (exact in f32, and in bf16: the ${gemm} operands) and the global decode scales are
// applied to the f32 accumulation, as the GEMM's alpha. The contraction runs over the padded K
// (${Kp}): padding encodes as zeros.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type}, %ga: tensor<f32>,
                            %b: tensor<${b_shape}xi8>, %sb: ${sb_type}, %gb: tensor<f32>)
    -> tensor<${M}x${N}xf32> attributes {${attrs}} {${m_defs}
${unswizzle_a}
${unswizzle_b}
${dequant_a}
${dequant_b}
  %zero = arith.constant 0.0 : f32
  %acc_empty = tensor.empty(${m}) : tensor<${M}x${N}xf32>
  %acc_init = linalg.fill ins(%zero : f32) outs(%acc_empty : tensor<${M}x${N}xf32>) -> tensor<${M}x${N}xf32>
${contraction}
  %out_empty = tensor.empty(${m}) : tensor<${M}x${N}xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> ()>,
                       affine_map<(m, n) -> ()>, affine_map<(m, n) -> (m, n)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%acc, %ga, %gb : tensor<${M}x${N}xf32>, tensor<f32>, tensor<f32>)
      outs(%out_empty : tensor<${M}x${N}xf32>) {
  ^bb0(%v: f32, %g1: f32, %g2: f32, %o: f32):
    %alpha = arith.mulf %g1, %g2 : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${M}x${N}xf32>
  return %out : tensor<${M}x${N}xf32>
}
