// A bf16 weight's one-row linear as a matrix-vector product that reads the weight as stored
// (the executable @${exe}, gemv_bf16_executable.mlir): out = x . w^T, f32 sums; no widened
// copy of w exists.
func.func private @${name}(%x: tensor<${x_shape}xf32>, %w: tensor<${N}x${K}xbf16>)
    -> tensor<${out_shape}xf32> {
  %x_row = tensor.collapse_shape %x [[${x_dims}]] : tensor<${x_shape}xf32> into tensor<${K}xf32>
  %n = arith.constant ${N} : index
  %acc = flow.dispatch @${exe}::@${fn}[%n](%x_row, %w)
      : (tensor<${K}xf32>, tensor<${N}x${K}xbf16>) -> tensor<${N}xf32>
  %out = tensor.expand_shape %acc [[${x_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
