// amax: max |x| over the whole tensor; NaN elements are ignored (as TE's fmax reduction).
// Reduced on the bit patterns (exact under flush-to-zero). The module also takes x's 1x${bk}
// block amax: this starts with the very same block reduction (amax_block_rows_bits.mlir), which
// IREE's CSE then shares, so x is read once for both; then the block maxima per row, then the
// rows.
func.func private @${name}(%x: tensor<${M}x${K}xf32>) -> tensor<f32> attributes {${attrs}} {${m_defs}
${block_bits}
  %empty_rows = tensor.empty(${m}) : tensor<${M}xi32>
  %init_rows = linalg.fill ins(%blk_zero : i32) outs(%empty_rows : tensor<${M}xi32>) -> tensor<${M}xi32>
  %row_bits = linalg.generic {
      indexing_maps = [affine_map<(r, k) -> (r, k)>, affine_map<(r, k) -> (r)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%blk_bits : tensor<${M}x${Kb}xi32>) outs(%init_rows : tensor<${M}xi32>) {
  ^bb0(%b: i32, %acc: i32):
    %m = arith.maxui %acc, %b : i32
    linalg.yield %m : i32
  } -> tensor<${M}xi32>
  %empty = tensor.empty() : tensor<i32>
  %init = linalg.fill ins(%blk_zero : i32) outs(%empty : tensor<i32>) -> tensor<i32>
  %amax_bits = linalg.generic {
      indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
      iterator_types = ["reduction"]}
      ins(%row_bits : tensor<${M}xi32>) outs(%init : tensor<i32>) {
  ^bb0(%b: i32, %acc: i32):
    %m = arith.maxui %acc, %b : i32
    linalg.yield %m : i32
  } -> tensor<i32>
  %empty_f = tensor.empty() : tensor<f32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%amax_bits : tensor<i32>) outs(%empty_f : tensor<f32>) {
  ^bb0(%b: i32, %o: f32):
    %f = arith.bitcast %b : i32 to f32
    linalg.yield %f : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}
