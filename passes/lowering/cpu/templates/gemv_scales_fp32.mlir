  // snippet: reads %sa:${sa_type} %sb:${sb_type}; defines %x_column:tensor<${KB}x1xf32> %x_scales:tensor<${KB}xf32> %w_scales:tensor<${RB}x${WKB}xf32>
  // fp32 scales: A's [K blocks] from column 0 of its block1d layout (rows padded to 4); B's in
  // its block2d layout as they are (a row's scales at row block n / ${rb})
  %x_column = tensor.extract_slice %sa[0, 0] [${KB}, 1] [1, 1] : ${sa_type} to tensor<${KB}x1xf32>
  %x_scales = tensor.collapse_shape %x_column [[0, 1]] : tensor<${KB}x1xf32> into tensor<${KB}xf32>
  %w_scales = tensor.cast %sb : ${sb_type} to tensor<${RB}x${WKB}xf32>
