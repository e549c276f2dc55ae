// scaled_matmul (block-scaled FP8: ${scale_doc}; one row of A, B stored [N, K]) as a
// matrix-vector product that reads B's codes as stored and decodes them in its loop (the
// executable @${exe}, gemv_fp8_executable.mlir): each 32 codes' products summed in f32, times
// the product of their K block's scales (powers of two: exact), added up; no decoded copy of B.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type},
                            %b: tensor<${N}x${K}xi8>, %sb: ${sb_type})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
${scales}
${activation}${scale_x}
  %n = arith.constant ${N} : index
  ${acc} = flow.dispatch @${exe}::@${fn}[%n](%a_x, ${x_scales}, %b, %w_scales)
      : (tensor<${K}x${x_elem}>, tensor<${KB}xf32>, tensor<${N}x${K}xi8>, tensor<${RB}x${WKB}x${ws_elem}>)
      -> tensor<${N}xf32>${nan_rows}
  %out = tensor.expand_shape %acc [[${out_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
