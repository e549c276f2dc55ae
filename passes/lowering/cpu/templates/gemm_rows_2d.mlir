// snippet: reads %a:tensor<${M}x${AK}xi8>; defines %a_rows:tensor<${M}x${AK}xi8>
  %a_rows = tensor.cast %a : tensor<${M}x${AK}xi8> to tensor<${M}x${AK}xi8>
