// snippet: reads %a:tensor<${a_shape}x${a_elem}>; defines %a_rows:tensor<${M}x${AK}x${a_elem}>
  %a_rows = tensor.collapse_shape %a [${groups}] : tensor<${a_shape}x${a_elem}> into tensor<${M}x${AK}x${a_elem}>
