// compute_scale (fp8_per_tensor) on cuda: TE's compute_scale_from_amax in one thread
// (qmlir_fp8_scale_from_amax; format ${format}, pow2 ${pow2}, epsilon bits ${eps_bits}).
func.func private @${name}(%amax: tensor<f32>) -> tensor<f32> attributes {${attrs}} {
  %format = arith.constant ${format} : i32
  %pow2 = arith.constant ${pow2} : i32
  %eps_bits = arith.constant ${eps_bits} : i32
${extern}
  return %scale : tensor<f32>
}
