  // snippet: reads %x:tensor<${M}x${K}xf32> %scale:tensor<${Mb}x${Kb}x${scale_elem}>; defines %data:tensor<${M}x${K}xi8>; locals %x_tiles %tiles_empty %tiles %xv %s %out; holes element
  // x read as its [${Mb}, ${bm}, ${Kb}, ${bk}] tiles (M and K whole blocks, static): each
  // element's block scale is the broadcast of its tile's entry, an affine map IREE tiles and
  // vectorizes, not a gather by index per element (block_quantize_index.mlir: a 1024 x 2816
  // weight's 128 x 128 quantize 3.5 ms that way, benchmarks/RESULTS.md).
  %x_tiles = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [${Mb}, ${bm}, ${Kb}, ${bk}]
      : tensor<${M}x${K}xf32> into tensor<${Mb}x${bm}x${Kb}x${bk}xf32>
  %tiles_empty = tensor.empty() : tensor<${Mb}x${bm}x${Kb}x${bk}xi8>
  %tiles = linalg.generic {
      indexing_maps = [affine_map<(i, a, j, b) -> (i, a, j, b)>, affine_map<(i, a, j, b) -> (i, j)>,
                       affine_map<(i, a, j, b) -> (i, a, j, b)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x_tiles, %scale : tensor<${Mb}x${bm}x${Kb}x${bk}xf32>, tensor<${Mb}x${Kb}x${scale_elem}>)
      outs(%tiles_empty : tensor<${Mb}x${bm}x${Kb}x${bk}xi8>) {
  ^bb0(%xv: f32, %s: ${scale_elem}, %out: i8):
${element}
    linalg.yield ${result} : i8
  } -> tensor<${Mb}x${bm}x${Kb}x${bk}xi8>
  %data = tensor.collapse_shape %tiles [[0, 1], [2, 3]]
      : tensor<${Mb}x${bm}x${Kb}x${bk}xi8> into tensor<${M}x${K}xi8>
