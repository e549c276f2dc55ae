// quantize (NVFP4, K a multiple of 16): per block the element multiplier enc (${enc_doc}), then
// data = cast_e2m1(clamp(x * enc, +-6)), two codes per byte, low nibble = even element.
// Gather-free: enc once per block (its own dispatch); then x read as [${M}, ${Kb}, 16] with enc
// a plain broadcast along each block, each code written as an i4 element: IREE stores i4
// tensors packed two per byte, even element in the low nibble, so the i4 codes bitcast
// (iree_tensor_ext.bitcast) to the packed bytes. Block scale codes pass through.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %d: tensor<${M}x${Kb}xi8>,
                            %global_in: tensor<f32>)
    -> (tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>) attributes {${attrs}} {
  %empty_enc = tensor.empty() : tensor<${M}x${Kb}xf32>
  %enc = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> ()>,
                       affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%d, %global_in : tensor<${M}x${Kb}xi8>, tensor<f32>)
      outs(%empty_enc : tensor<${M}x${Kb}xf32>) {
  ^bb0(%d_code: i8, %sd: f32, %o: f32):
${enc_body}
    linalg.yield %e : f32
  } -> tensor<${M}x${Kb}xf32>
  // once per block, in its own dispatch (fused into the encode, IREE recomputes it per vector)
  %enc_once = util.optimization_barrier %enc : tensor<${M}x${Kb}xf32>
  %blocks = tensor.expand_shape %x [[0], [1, 2]] output_shape [${M}, ${Kb}, 16]
      : tensor<${M}x${K}xf32> into tensor<${M}x${Kb}x16xf32>
  %empty_codes = tensor.empty() : tensor<${M}x${Kb}x16xi4>
  %codes_blocks = linalg.generic {
      indexing_maps = [affine_map<(i, b, t) -> (i, b, t)>, affine_map<(i, b, t) -> (i, b)>,
                       affine_map<(i, b, t) -> (i, b, t)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%blocks, %enc_once : tensor<${M}x${Kb}x16xf32>, tensor<${M}x${Kb}xf32>)
      outs(%empty_codes : tensor<${M}x${Kb}x16xi4>) {
  ^bb0(%xv: f32, %s: f32, %o: i4):
${encode}
    %nibble = arith.trunci %byte : i8 to i4
    linalg.yield %nibble : i4
  } -> tensor<${M}x${Kb}x16xi4>
  %codes = tensor.collapse_shape %codes_blocks [[0], [1, 2]]
      : tensor<${M}x${Kb}x16xi4> into tensor<${M}x${K}xi4>
  %packed = iree_tensor_ext.bitcast %codes : tensor<${M}x${K}xi4> -> tensor<${M}x${Kh}xi8>
  return %packed, %d : tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>
}
