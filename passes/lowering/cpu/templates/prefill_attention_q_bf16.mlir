// snippet: reads %q_rows:tensor<?x${E}xf32> %rows:index; defines %q_empty:tensor<?x${E}xbf16> %q_any:tensor<?x${E}xbf16>; locals %qx %qo %qb
  // q's values as bf16 (bf16's: exact)
  %q_empty = tensor.empty(%rows) : tensor<?x${E}xbf16>
  %q_any = linalg.generic {
      indexing_maps = [affine_map<(r, e) -> (r, e)>, affine_map<(r, e) -> (r, e)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%q_rows : tensor<?x${E}xf32>) outs(%q_empty : tensor<?x${E}xbf16>) {
  ^bb0(%qx: f32, %qo: bf16):
    %qb = arith.truncf %qx : f32 to bf16
    linalg.yield %qb : bf16
  } -> tensor<?x${E}xbf16>
