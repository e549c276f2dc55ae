// scaled_matmul (${scaling}, "nt") on cuda: C f32 [M, N] = A [M, K] x B [N, K]^T with FP32
// accumulation, by ${kernel} (mma.sync on FP8; A's leading dims flattened into M).
func.func private @${name}(${params}) -> tensor<${out_shape}xf32> attributes {${attrs}} {
  %a_2d = ${flatten_a}${sizes}
  %m = ${M}
  %n = arith.constant ${N} : i32
  %k = arith.constant ${K} : i32
${extra_constants}${extern}
  %out = ${unflatten_c}
  return %out : tensor<${out_shape}xf32>
}
