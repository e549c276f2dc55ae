// snippet: reads %a:tensor<${a_shape}xi8>; defines %a_rows:tensor<${M}x${AK}xi8>
  %a_rows = tensor.collapse_shape %a [${groups}] : tensor<${a_shape}xi8> into tensor<${M}x${AK}xi8>
