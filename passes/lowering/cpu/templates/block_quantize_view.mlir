  // snippet: reads ${x}:tensor<${M}x${K}xf32> ${scale}:tensor<${M}x${Kb}x${scale_elem}>; defines %${p}data:tensor<${M}x${K}xi8>; locals %xv %s %out; holes element
  // x read as [M, K / ${bk}, ${bk}] (K is whole blocks of one row): each element's block scale is
  // an affine read, a broadcast (block_quantize_index.mlir's gather per element is slower). The
  // compute barriers keep IREE from folding the reshape into the op, which would turn the
  // broadcast back into a gather.
  %${p}x_raw = tensor.expand_shape ${x} [[0], [1, 2]] output_shape [${M_size}, ${Kb}, ${bk}]
      : tensor<${M}x${K}xf32> into tensor<${M}x${Kb}x${bk}xf32>
  %${p}x_blocks = iree_tensor_ext.compute_barrier.start %${p}x_raw : tensor<${M}x${Kb}x${bk}xf32>${m_braces} -> tensor<${M}x${Kb}x${bk}xf32>
  %${p}scale_rows = iree_tensor_ext.compute_barrier.start ${scale} : tensor<${M}x${Kb}x${scale_elem}>${m_braces} -> tensor<${M}x${Kb}x${scale_elem}>
  %${p}empty = tensor.empty(${m}) : tensor<${M}x${Kb}x${bk}xi8>
  %${p}blocks = linalg.generic {
      indexing_maps = [affine_map<(m, b, j) -> (m, b, j)>, affine_map<(m, b, j) -> (m, b)>,
                       affine_map<(m, b, j) -> (m, b, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%${p}x_blocks, %${p}scale_rows : tensor<${M}x${Kb}x${bk}xf32>, tensor<${M}x${Kb}x${scale_elem}>)
      outs(%${p}empty : tensor<${M}x${Kb}x${bk}xi8>) {
  ^bb0(%xv: f32, %s: ${scale_elem}, %out: i8):
${element}
    linalg.yield ${result} : i8
  } -> tensor<${M}x${Kb}x${bk}xi8>
  %${p}data = tensor.collapse_shape %${p}blocks [[0], [1, 2]]
      : tensor<${M}x${Kb}x${bk}xi8> into tensor<${M}x${K}xi8>
