  // snippet: reads ${swizzled}:${swizzled_type}; defines %${p}S:tensor<${rows}x${cols}xi8>; holes offset
  // S[row, k_block] read back once from the swizzled (mx) scales ${swizzled}, so the dequantize
  // below looks its scale up directly (scales are 32x or 16x smaller than the data)
  %${p}s_empty = tensor.empty(${rows_empty}) : tensor<${rows}x${cols}xi8>
  %${p}S = linalg.generic {
      indexing_maps = [affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      outs(%${p}s_empty : tensor<${rows}x${cols}xi8>) {
  ^bb0(%${p}o: i8):
    %${p}r = linalg.index 0 : index
    %${p}c = linalg.index 1 : index
${offset}
    %${p}v = tensor.extract ${swizzled}[%${p}off] : ${swizzled_type}
    linalg.yield %${p}v : i8
  } -> tensor<${rows}x${cols}xi8>
