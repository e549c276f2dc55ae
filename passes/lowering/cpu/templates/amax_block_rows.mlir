// amax per 1x${bk} block of x [${M}, ${K}] -> [${M}, ${Kb}] (K a multiple of ${bk}: no padding):
// a plain last-dim reduction (amax_block_rows_bits.mlir).
func.func private @${name}(%x: tensor<${M}x${K}xf32>) -> tensor<${M}x${Kb}xf32>
    attributes {${attrs}} {${m_defs}
${block_bits}
  %empty_f = tensor.empty(${m}) : tensor<${M}x${Kb}xf32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%blk_bits : tensor<${M}x${Kb}xi32>) outs(%empty_f : tensor<${M}x${Kb}xf32>) {
  ^bb0(%b: i32, %o: f32):
    %f = arith.bitcast %b : i32 to f32
    linalg.yield %f : f32
  } -> tensor<${M}x${Kb}xf32>
  return %amax : tensor<${M}x${Kb}xf32>
}
