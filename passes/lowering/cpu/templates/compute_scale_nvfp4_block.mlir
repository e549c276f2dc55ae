// compute_scale (NVFP4 block decode scale, TE's reference order, f32):
// d = cast_e4m3(clamp(min(block_amax * (S * f32(1/6)), FLT_MAX), +-448)), the cast the
// saturating E4M3 encoder (exact for f32-subnormal amax too).
func.func private @${name}(%amax: tensor<${Mb}x${Kb}xf32>, %s_enc: tensor<f32>)
    -> tensor<${Mb}x${Kb}xi8> attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${Mb}x${Kb}xi8>
  %codes = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> ()>,
                       affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%amax, %s_enc : tensor<${Mb}x${Kb}xf32>, tensor<f32>)
      outs(%empty : tensor<${Mb}x${Kb}xi8>) {
  ^bb0(%a: f32, %s: f32, %o: i8):
    %sixth = arith.constant ${sixth} : f32
    %mult = arith.mulf %s, %sixth : f32
${encode}
    linalg.yield %byte : i8
  } -> tensor<${Mb}x${Kb}xi8>
  return %codes : tensor<${Mb}x${Kb}xi8>
}
