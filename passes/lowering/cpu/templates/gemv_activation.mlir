  // snippet: reads %a:tensor<${a_shape}xi8>; defines %${p}bf16:tensor<${K}xbf16>; holes decode_a
  // A's one row of codes decoded to bf16 (exact: every FP8 value is a bf16)
  %${p}row = tensor.collapse_shape %a [[${a_dims}]] : tensor<${a_shape}xi8> into tensor<${K}xi8>
  %${p}empty = tensor.empty() : tensor<${K}xbf16>
  %${p}bf16 = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%${p}row : tensor<${K}xi8>) outs(%${p}empty : tensor<${K}xbf16>) {
  ^bb0(%${p}code: i8, %${p}out: bf16):
${decode_a}
    %${p}narrow = arith.truncf %${p}val : f32 to bf16
    linalg.yield %${p}narrow : bf16
  } -> tensor<${K}xbf16>
