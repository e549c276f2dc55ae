// snippet: reads %acc_out:tensor<${out_shape}xf32>; defines %out:tensor<${out_shape}xf32>
  // block scales only: the sums as they are
  %out = tensor.cast %acc_out : tensor<${out_shape}xf32> to tensor<${out_shape}xf32>
