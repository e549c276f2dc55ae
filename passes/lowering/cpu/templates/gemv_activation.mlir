  // snippet: reads %a:tensor<${a_shape}xi8>; defines %${p}x:tensor<${K}x${x_elem}>; holes decode_a to_x
  // A's one row of codes decoded to ${x_elem} (exact: every FP8 value is a bf16; to_x)
  %${p}row = tensor.collapse_shape %a [[${a_dims}]] : tensor<${a_shape}xi8> into tensor<${K}xi8>
  %${p}empty = tensor.empty() : tensor<${K}x${x_elem}>
  %${p}x = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%${p}row : tensor<${K}xi8>) outs(%${p}empty : tensor<${K}x${x_elem}>) {
  ^bb0(%${p}code: i8, %${p}out: ${x_elem}):
${decode_a}
${to_x}
    linalg.yield %${p}narrow : ${x_elem}
  } -> tensor<${K}x${x_elem}>
