// quantize (FP32-scaled blocks of ${bm}x${bk}): data = cast(x * scale) per block with the
// integer-only encoder of encode_fp8.mlir; scale_inv = 1 / scale per block (exact, also when
// an f32 subnormal).
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xf32>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xf32>) attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${M}x${K}xi8>
  %data = linalg.generic {
      indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (m, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<${M}x${K}xf32>) outs(%empty : tensor<${M}x${K}xi8>) {
  ^bb0(%xv: f32, %out: i8):
    // the block's scale (read by index: IREE cannot tile floordiv indexing maps)
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %bm_i = arith.constant ${bm} : index
    %bk_i = arith.constant ${bk} : index
    %row_b = arith.divui %row, %bm_i : index
    %col_b = arith.divui %col, %bk_i : index
    %s = tensor.extract %scale[%row_b, %col_b] : tensor<${Mb}x${Kb}xf32>
${encode}
    linalg.yield %byte : i8
  } -> tensor<${M}x${K}xi8>
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
