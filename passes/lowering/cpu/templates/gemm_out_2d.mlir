// snippet: reads %acc_rows:tensor<${M}x${N}xf32>; defines %out:tensor<${M}x${N}xf32>
  %out = tensor.cast %acc_rows : tensor<${M}x${N}xf32> to tensor<${M}x${N}xf32>
