// snippet: reads %k_pad:tensor<${kv_rows}x?x${E}xf32> %kt_empty:tensor<${kv_rows}x${EP}x?x2xbf16>; defines %kt_pairs:tensor<${kv_rows}x${EP}x?x2xbf16> %kt:tensor<${kv_rows}x${EP}x?xbf16>; locals %kx %ko %kb
  // K as pairs of the head dim, transposed: [K/V heads, head dim / 2, keys x 2] bf16, element
  // [h, e, 2j + r] = K[h, j, 2e + r] (its values bf16's: the truncation is exact)
  %kt_pairs = linalg.generic {
      indexing_maps = [affine_map<(h, e, j, r) -> (h, j, e * 2 + r)>,
                       affine_map<(h, e, j, r) -> (h, e, j, r)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k_pad : tensor<${kv_rows}x?x${E}xf32>) outs(%kt_empty : tensor<${kv_rows}x${EP}x?x2xbf16>) {
  ^bb0(%kx: f32, %ko: bf16):
    %kb = arith.truncf %kx : f32 to bf16
    linalg.yield %kb : bf16
  } -> tensor<${kv_rows}x${EP}x?x2xbf16>
  %kt = tensor.collapse_shape %kt_pairs [[0], [1], [2, 3]]
      : tensor<${kv_rows}x${EP}x?x2xbf16> into tensor<${kv_rows}x${EP}x?xbf16>
