// quantize (per tensor) on cuda: data = encode(x * scale) (saturating, RNE), scale_inv = 1/scale,
// by qmlir_quantize_fp8_${format} over the flattened tensor.
func.func private @${name}(%x: tensor<${shape}xf32>, %scale: tensor<f32>)
    -> (tensor<${shape}xi8>, tensor<f32>) attributes {${attrs}} {
  %flat = ${flatten_x}${sizes}
  %n = ${n}
${extern}
  %data = ${unflatten_data}
  return %data, %q#1 : tensor<${shape}xi8>, tensor<f32>
}
