  // snippet: reads ${swizzled}:${swizzled_type}; defines %${p}S:tensor<1x${cols}xi8>
  // S[0, k_block] of one row read back from the swizzled (mx) scales ${swizzled}: the first 4
  // bytes of each 128x4 tile's 512 (swizzle_mx_row.mlir's insert, undone by slices)
  %${p}tiles = tensor.expand_shape ${swizzled} [[0, 1]] output_shape [${col_tiles}, 512]
      : ${swizzled_type} into tensor<${col_tiles}x512xi8>
  %${p}groups = tensor.extract_slice %${p}tiles[0, 0] [${col_tiles}, 4] [1, 1]
      : tensor<${col_tiles}x512xi8> to tensor<${col_tiles}x4xi8>
  %${p}padded = tensor.collapse_shape %${p}groups [[0, 1]]
      : tensor<${col_tiles}x4xi8> into tensor<${padded_cols}xi8>
  %${p}cols = tensor.extract_slice %${p}padded[0] [${cols}] [1]
      : tensor<${padded_cols}xi8> to tensor<${cols}xi8>
  %${p}S = tensor.expand_shape %${p}cols [[0, 1]] output_shape [1, ${cols}]
      : tensor<${cols}xi8> into tensor<1x${cols}xi8>
