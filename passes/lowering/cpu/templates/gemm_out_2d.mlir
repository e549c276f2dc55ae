// snippet: reads %acc_rows:tensor<${M}x${N}x${out_elem}>; defines %acc_out:tensor<${M}x${N}x${out_elem}>
  %acc_out = tensor.cast %acc_rows : tensor<${M}x${N}x${out_elem}> to tensor<${M}x${N}x${out_elem}>
