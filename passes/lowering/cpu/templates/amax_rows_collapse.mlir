  // snippet: reads %x:tensor<${shape}xf32>; defines %x_rows:tensor<${view}xf32>
  %x_rows = tensor.collapse_shape %x [${groups}]
      : tensor<${shape}xf32> into tensor<${view}xf32>
