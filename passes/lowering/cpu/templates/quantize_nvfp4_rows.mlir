// quantize (NVFP4, K a multiple of 16): per block the element multiplier enc (${enc_doc}), then
// data = cast_e2m1(clamp(x * enc, +-6)), two codes per byte, low nibble = even element.
// Gather-free: the block values depend on the block's scale code alone, so they are tabulated
// once for the 256 codes and each block looks them up (a broadcast of one table entry); x is
// read as [${R}, 16] (one row per block), each code written as an i4 element: IREE stores i4
// tensors packed two per byte, even element in the low nibble, so the i4 codes bitcast
// (iree_tensor_ext.bitcast) to the packed bytes. Block scale codes pass through.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %d: tensor<${M}x${Kb}xi8>,
                            %global_in: tensor<f32>)
    -> (tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>) attributes {${attrs}} {${m_defs}
${table}
  // [${R}, 16], one row per block: the iteration space IREE keeps, so the op's tiling holds
  // (the compute barrier keeps the codes' reshape from being folded into the op, which would
  // drop it; unlike util.optimization_barrier it is gone before the host program is built, so
  // it adds no host wait between the dispatches)
  %d_flat = tensor.collapse_shape %d [[0, 1]] : tensor<${M}x${Kb}xi8> into tensor<${R}xi8>
  %d_rows = iree_tensor_ext.compute_barrier.start %d_flat : tensor<${R}xi8>${r_braces} -> tensor<${R}xi8>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<${M}x${K}xf32> into tensor<${N}xf32>
  %blocks = tensor.expand_shape %flat [[0, 1]] output_shape [${R_size}, 16]
      : tensor<${N}xf32> into tensor<${R}x16xf32>
  %empty_codes = tensor.empty(${r_empty}) : tensor<${R}x16xi4>
  %codes_blocks = linalg.generic {
      indexing_maps = [affine_map<(b, t) -> (b, t)>, affine_map<(b, t) -> (b)>,
                       affine_map<(b, t) -> (b, t)>],
      iterator_types = ["parallel", "parallel"]${tiling}}
      ins(%blocks, %d_rows : tensor<${R}x16xf32>, tensor<${R}xi8>)
      outs(%empty_codes : tensor<${R}x16xi4>) {
  ^bb0(%xv: f32, %block_code: i8, %o: i4):
${lookup}
${encode}
    %nibble = arith.trunci %byte : i8 to i4
    linalg.yield %nibble : i4
  } -> tensor<${R}x16xi4>
  %codes_flat = tensor.collapse_shape %codes_blocks [[0, 1]]
      : tensor<${R}x16xi4> into tensor<${N}xi4>
  %codes = tensor.expand_shape %codes_flat [[0, 1]] output_shape [${M_size}, ${K}]
      : tensor<${N}xi4> into tensor<${M}x${K}xi4>
  %packed = iree_tensor_ext.bitcast %codes : tensor<${M}x${K}xi4>${m_braces} -> tensor<${M}x${Kh}xi8>${m_braces}
  return %packed, %d : tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>
}
