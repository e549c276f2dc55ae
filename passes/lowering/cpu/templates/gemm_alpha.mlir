// snippet: reads %acc_out:tensor<${out_shape}xf32> ${sa}:tensor<f32> ${sb}:tensor<f32>${size_reads}; defines %out_empty:tensor<${out_shape}xf32> %out:tensor<${out_shape}xf32>; locals %v %s1 %s2 %o %alpha %r
  // per-tensor (nvfp4: global) scales: acc * (sa * sb), the data-tiled GEMM's epilogue (IREE
  // fuses it with the consumer as it fused that one; sizes read:${size_reads})
  %out_empty = tensor.empty(${out_sizes}) : tensor<${out_shape}xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(${out_dims}) -> (${out_dims})>, affine_map<(${out_dims}) -> ()>,
                       affine_map<(${out_dims}) -> ()>, affine_map<(${out_dims}) -> (${out_dims})>],
      iterator_types = [${out_parallels}]}
      ins(%acc_out, ${sa}, ${sb} : tensor<${out_shape}xf32>, tensor<f32>, tensor<f32>)
      outs(%out_empty : tensor<${out_shape}xf32>) {
  ^bb0(%v: f32, %s1: f32, %s2: f32, %o: f32):
    %alpha = arith.mulf %s1, %s2 : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${out_shape}xf32>
