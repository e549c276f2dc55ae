// quantize (FP32-scaled blocks of ${bm}x${bk}): data = cast(x * scale) per block with the
// integer-only encoder of encode_fp8.mlir; scale_inv = 1 / scale per block (exact, also when
// an f32 subnormal).
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xf32>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xf32>) attributes {${attrs}} {${m_defs}
${data}
  %empty_s = tensor.empty(${m}) : tensor<${Mb}x${Kb}xf32>
  %scale_inv = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%scale : tensor<${Mb}x${Kb}xf32>) outs(%empty_s : tensor<${Mb}x${Kb}xf32>) {
  ^bb0(%s: f32, %out: f32):
${reciprocal}
    linalg.yield %result : f32
  } -> tensor<${Mb}x${Kb}xf32>
  return %data, %scale_inv : tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xf32>
}
