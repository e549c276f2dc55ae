// snippet: reads %a:tensor<${M}x${K}xi8>; defines %a_rows:tensor<${M}x${K}xi8>
  %a_rows = tensor.cast %a : tensor<${M}x${K}xi8> to tensor<${M}x${K}xi8>
