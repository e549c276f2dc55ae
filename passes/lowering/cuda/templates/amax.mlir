// amax on cuda: max |x| (NaN ignored) by qmlir_amax_f32, which max-reduces into a zero-filled
// f32[1]: the dispatch's result is tied to %zero (IREE gives it a fresh copy of the zeros).
func.func private @${name}(%x: tensor<${shape}xf32>) -> tensor<f32> attributes {${attrs}} {
  %flat = ${flatten_x}${sizes}
  %n = ${n}
  %zero = arith.constant dense<0.0> : tensor<f32>
${extern}
  return %amax : tensor<f32>
}
