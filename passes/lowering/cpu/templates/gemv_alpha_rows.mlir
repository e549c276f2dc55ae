  // snippet: reads %acc:tensor<${N}xf32> %a_scale_inv:${sa_type} %b_scale_inv:${sb_type}; defines %out_empty:tensor<${N}xf32> %scaled:tensor<${N}xf32> %out:tensor<${out_shape}xf32>; locals %v %g1 %g2 %o %alpha %r
  // fp8-rowwise: each row's sum times A's one row scale_inv and that row of B's (the scales'
  // block1d layout [1, pad4(rows)]: A's at [0, 0], B's row n at [0, n]), in the output's shape
  %out_empty = tensor.empty() : tensor<${N}xf32>
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> (0, 0)>,
                       affine_map<(n) -> (0, n)>, affine_map<(n) -> (n)>],
      iterator_types = ["parallel"]}
      ins(%acc, %a_scale_inv, %b_scale_inv : tensor<${N}xf32>, ${sa_type}, ${sb_type})
      outs(%out_empty : tensor<${N}xf32>) {
  ^bb0(%v: f32, %g1: f32, %g2: f32, %o: f32):
    %alpha = arith.mulf %g1, %g2 : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${N}xf32>
  %out = tensor.expand_shape %scaled [[${out_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
