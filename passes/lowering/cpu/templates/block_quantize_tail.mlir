  // snippet: reads ${x}:tensor<${M}x${K}xf32> ${scale}:tensor<${M}x1x${scale_elem}>; defines %${p}data:tensor<${M}x${K}xi8>; locals %xv %s %out; holes element
  // the last ${K} elements of each row, a partial block: cast with the row's last block scale
  %${p}empty = tensor.empty(${m}) : tensor<${M}x${K}xi8>
  %${p}data = linalg.generic {
      indexing_maps = [affine_map<(m, j) -> (m, j)>, affine_map<(m, j) -> (m, 0)>,
                       affine_map<(m, j) -> (m, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(${x}, ${scale} : tensor<${M}x${K}xf32>, tensor<${M}x1x${scale_elem}>)
      outs(%${p}empty : tensor<${M}x${K}xi8>) {
  ^bb0(%xv: f32, %s: ${scale_elem}, %out: i8):
${element}
    linalg.yield ${result} : i8
  } -> tensor<${M}x${K}xi8>
