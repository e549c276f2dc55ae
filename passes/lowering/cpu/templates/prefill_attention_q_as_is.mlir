// snippet: reads %q_rows:tensor<?x${E}xf32>; defines %q_any:tensor<?x${E}xf32>
  %q_any = tensor.cast %q_rows : tensor<?x${E}xf32> to tensor<?x${E}xf32>
