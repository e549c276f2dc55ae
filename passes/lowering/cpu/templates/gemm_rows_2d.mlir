// snippet: reads %a:tensor<${M}x${AK}x${a_elem}>; defines %a_rows:tensor<${M}x${AK}x${a_elem}>
  %a_rows = tensor.cast %a : tensor<${M}x${AK}x${a_elem}> to tensor<${M}x${AK}x${a_elem}>
