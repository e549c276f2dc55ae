// snippet: reads %acc_out:tensor<${out_shape}x${out_elem}>; defines %out:tensor<${out_shape}x${out_elem}>
  // the GEMM's outputs as they are (block scales only, or scaled and rounded in the GEMM)
  %out = tensor.cast %acc_out : tensor<${out_shape}x${out_elem}> to tensor<${out_shape}x${out_elem}>
