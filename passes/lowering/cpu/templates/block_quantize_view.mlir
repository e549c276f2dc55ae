  // snippet: reads ${x}:tensor<${M}x${K}xf32> ${scale}:tensor<${M}x${Kb}x${scale_elem}>; defines %${p}data:tensor<${M}x${K}xi8>; locals %xv %s %out; holes element
  // x read as [${R}, ${bk}], one row per block (K is whole blocks of one row): each element's
  // block scale is a broadcast of its row's entry in the flattened scales, not a gather by index
  // (block_quantize_index.mlir). [blocks, ${bk}] is the iteration space IREE keeps, so the op's
  // tiling holds; the compute barrier keeps the scales' reshape from being folded into the op,
  // which would turn the broadcast back into a gather per element.${r_defs}
  %${p}x_flat = tensor.collapse_shape ${x} [[0, 1]] : tensor<${M}x${K}xf32> into tensor<${N}xf32>
  %${p}x_rows = tensor.expand_shape %${p}x_flat [[0, 1]] output_shape [${R_size}, ${bk}]
      : tensor<${N}xf32> into tensor<${R}x${bk}xf32>
  %${p}scale_flat = tensor.collapse_shape ${scale} [[0, 1]]
      : tensor<${M}x${Kb}x${scale_elem}> into tensor<${R}x${scale_elem}>
  %${p}scale_rows = iree_tensor_ext.compute_barrier.start %${p}scale_flat : tensor<${R}x${scale_elem}>${r_braces} -> tensor<${R}x${scale_elem}>
  %${p}empty = tensor.empty(${r_empty}) : tensor<${R}x${bk}xi8>
  %${p}rows = linalg.generic {
      indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>,
                       affine_map<(b, j) -> (b, j)>],
      iterator_types = ["parallel", "parallel"]${tiling}}
      ins(%${p}x_rows, %${p}scale_rows : tensor<${R}x${bk}xf32>, tensor<${R}x${scale_elem}>)
      outs(%${p}empty : tensor<${R}x${bk}xi8>) {
  ^bb0(%xv: f32, %s: ${scale_elem}, %out: i8):
${element}
    linalg.yield ${result} : i8
  } -> tensor<${R}x${bk}xi8>
  %${p}data_flat = tensor.collapse_shape %${p}rows [[0, 1]] : tensor<${R}x${bk}xi8> into tensor<${N}xi8>
  %${p}data = tensor.expand_shape %${p}data_flat [[0, 1]] output_shape [${M_size}, ${K}]
      : tensor<${N}xi8> into tensor<${M}x${K}xi8>
