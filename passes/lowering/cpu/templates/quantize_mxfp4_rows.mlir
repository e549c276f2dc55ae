// quantize (MXFP4, K a multiple of 32): data = cast_e2m1(x * 2^(127 - e)) per 1x32 block with its
// E8M0 scale code e (quantize_e8m0_element.mlir), two codes per byte, low nibble = even element.
// Gather-free: x is read as [${R}, 32] (one row per block), its block's scale a broadcast, each
// code written as an i4 element: IREE stores i4 tensors packed two per byte, even element in the
// low nibble, so the i4 codes bitcast (iree_tensor_ext.bitcast) to the packed bytes. The scale
// codes pass through unchanged.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${M}x${Kb}xi8>)
    -> (tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>) attributes {${attrs}} {${m_defs}
  // the compute barrier keeps the scales' reshape from being folded into the op, which would
  // drop its tiling (it is gone before IREE builds the host program)
  %s_flat = tensor.collapse_shape %scale [[0, 1]] : tensor<${M}x${Kb}xi8> into tensor<${R}xi8>
  %s_rows = iree_tensor_ext.compute_barrier.start %s_flat : tensor<${R}xi8>${r_braces} -> tensor<${R}xi8>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<${M}x${K}xf32> into tensor<${N}xf32>
  %blocks = tensor.expand_shape %flat [[0, 1]] output_shape [${R_size}, 32]
      : tensor<${N}xf32> into tensor<${R}x32xf32>
  %empty_codes = tensor.empty(${r_empty}) : tensor<${R}x32xi4>
  %codes_blocks = linalg.generic {
      indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b)>,
                       affine_map<(b, t) -> (b, t)>],
      iterator_types = ["parallel", "parallel"]${tiling}}
      ins(%blocks, %s_rows : tensor<${R}x32xf32>, tensor<${R}xi8>)
      outs(%empty_codes : tensor<${R}x32xi4>) {
  ^bb0(%xv: f32, %s: i8, %o: i4):
${element}
    %nibble = arith.trunci %q_result : i8 to i4
    linalg.yield %nibble : i4
  } -> tensor<${R}x32xi4>
  %codes_flat = tensor.collapse_shape %codes_blocks [[0, 1]]
      : tensor<${R}x32xi4> into tensor<${N}xi4>
  %codes = tensor.expand_shape %codes_flat [[0, 1]] output_shape [${M_size}, ${K}]
      : tensor<${N}xi4> into tensor<${M}x${K}xi4>
  %packed = iree_tensor_ext.bitcast %codes : tensor<${M}x${K}xi4>${m_braces} -> tensor<${M}x${Kh}xi8>${m_braces}
  return %packed, %scale : tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>
}
