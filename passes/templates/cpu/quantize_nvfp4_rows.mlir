// quantize (NVFP4, K a multiple of 16): per block the element multiplier enc (${enc_doc}), then
// data = cast_e2m1(clamp(x * enc, +-6)), two codes per byte, low nibble = even element.
// Gather-free: enc once per block (its own dispatch); then x read as [${R}, 16] (one row per
// block) with enc a plain broadcast along each block, each code written as an i4 element: IREE
// stores i4 tensors packed two per byte, even element in the low nibble, so the i4 codes bitcast
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
  // [${R}, 16], one row per block: the iteration space IREE keeps, so the op's tiling holds
  %enc_rows = tensor.collapse_shape %enc_once [[0, 1]] : tensor<${M}x${Kb}xf32> into tensor<${R}xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<${M}x${K}xf32> into tensor<${N}xf32>
  %blocks = tensor.expand_shape %flat [[0, 1]] output_shape [${R}, 16]
      : tensor<${N}xf32> into tensor<${R}x16xf32>
  %empty_codes = tensor.empty() : tensor<${R}x16xi4>
  %codes_blocks = linalg.generic {
      indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b)>,
                       affine_map<(b, t) -> (b, t)>],
      iterator_types = ["parallel", "parallel"]${tiling}}
      ins(%blocks, %enc_rows : tensor<${R}x16xf32>, tensor<${R}xf32>)
      outs(%empty_codes : tensor<${R}x16xi4>) {
  ^bb0(%xv: f32, %s: f32, %o: i4):
${encode}
    %nibble = arith.trunci %byte : i8 to i4
    linalg.yield %nibble : i4
  } -> tensor<${R}x16xi4>
  %codes_flat = tensor.collapse_shape %codes_blocks [[0, 1]]
      : tensor<${R}x16xi4> into tensor<${N}xi4>
  %codes = tensor.expand_shape %codes_flat [[0, 1]] output_shape [${M}, ${K}]
      : tensor<${N}xi4> into tensor<${M}x${K}xi4>
  %packed = iree_tensor_ext.bitcast %codes : tensor<${M}x${K}xi4> -> tensor<${M}x${Kh}xi8>
  return %packed, %d : tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>
}
