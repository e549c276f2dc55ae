// snippet: reads %acc_rows:tensor<${M}x${N}x${out_elem}>${size_reads}; defines %acc_out:tensor<${out_shape}x${out_elem}>
  // the rows back to A's leading dims (sizes read:${size_reads})
  %acc_out = tensor.expand_shape %acc_rows [${groups}] output_shape [${sizes}] : tensor<${M}x${N}x${out_elem}> into tensor<${out_shape}x${out_elem}>
