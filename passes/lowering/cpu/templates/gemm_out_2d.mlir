// snippet: reads %acc_rows:tensor<${M}x${N}xf32>; defines %acc_out:tensor<${M}x${N}xf32>
  %acc_out = tensor.cast %acc_rows : tensor<${M}x${N}xf32> to tensor<${M}x${N}xf32>
