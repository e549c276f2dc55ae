// compute_scale (nvfp4_global_decode, from fuse-quantize-core) on cuda: TE's global decode scale
// S_dec = 1 / S, S = min(2688 / global_amax, FLT_MAX) (1 when that is 0), in one thread by
// qmlir_nvfp4_decode_scale; the fused quantize kernel derives S itself from the same amax.
func.func private @${name}(%amax: tensor<f32>) -> tensor<f32> attributes {${attrs}} {
${extern}
  return %s_dec : tensor<f32>
}
