  // snippet: reads %acc:tensor<${N}xf32> ${sa}:tensor<f32> ${sb}:tensor<f32>; defines %out_empty:tensor<${N}xf32> %scaled:tensor<${N}xf32> %out:tensor<${out_shape}xf32>; locals %v %g1 %g2 %o %alpha %r
  // the sums times the product of two scalar scales (per-tensor scale_invs, nvfp4's global
  // decode scales: the GEMM's alpha), in the output's shape
  %out_empty = tensor.empty() : tensor<${N}xf32>
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>,
                       affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%acc, ${sa}, ${sb} : tensor<${N}xf32>, tensor<f32>, tensor<f32>)
      outs(%out_empty : tensor<${N}xf32>) {
  ^bb0(%v: f32, %g1: f32, %g2: f32, %o: f32):
    %alpha = arith.mulf %g1, %g2 : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${N}xf32>
  %out = tensor.expand_shape %scaled [[${out_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
