// scaled_matmul (FP8 with per-tensor scales, or fp8-rowwise's per row; one row of A, B stored
// [N, K]) as a matrix-vector product that reads B's codes as stored and decodes them in its loop
// (the executable @${exe}, gemv_fp8_executable.mlir): out = (decode(a) . decode(b)) *
// (a_scale_inv * b_scale_inv[n]), the products exact in f32, f32 sums; no decoded copy of B
// exists.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %a_scale_inv: ${sa_type},
                            %b: tensor<${N}x${K}xi8>, %b_scale_inv: ${sb_type})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
${activation}
  %n = arith.constant ${N} : index
  ${acc} = flow.dispatch @${exe}::@${fn}[%n](%a_x, %b)
      : (tensor<${K}x${x_elem}>, tensor<${N}x${K}xi8>) -> tensor<${N}xf32>${nan_rows}
${alpha}
  return %out : tensor<${out_shape}xf32>
}
