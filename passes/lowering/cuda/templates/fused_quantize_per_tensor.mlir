// fused_quantize (per tensor, fp8-delayed) on cuda: data = encode(x * scale) with the stored scale
// (saturating, RNE), scale_inv = 1/scale, and this call's amax = max|x| (NaN ignored), in one pass
// over x by qmlir_quantize_fp8_delayed_${format}. The amax result is tied to a zero-filled f32[1]
// the kernel max-reduces into (IREE gives the dispatch a fresh copy of the zeros).
func.func private @${name}(%x: tensor<${shape}xf32>, %scale: tensor<f32>)
    -> (tensor<${shape}xi8>, tensor<f32>, tensor<f32>) attributes {${attrs}} {
  %flat = ${flatten_x}${sizes}
  %n = ${n}
  %zero = arith.constant dense<0.0> : tensor<f32>
${extern}
  %data = ${unflatten_data}
  return %data, %q#1, %q#2 : tensor<${shape}xi8>, tensor<f32>, tensor<f32>
}
