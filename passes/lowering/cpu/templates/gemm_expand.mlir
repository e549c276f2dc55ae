// snippet: reads %acc_rows:tensor<${M}x${N}xf32>${size_reads}; defines %acc_out:tensor<${out_shape}xf32>
  // the rows back to A's leading dims (sizes read:${size_reads})
  %acc_out = tensor.expand_shape %acc_rows [${groups}] output_shape [${sizes}] : tensor<${M}x${N}xf32> into tensor<${out_shape}xf32>
