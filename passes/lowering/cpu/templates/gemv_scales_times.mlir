  // snippet: reads %x_scales:tensor<${KB}xf32>; defines %x_scales_empty:tensor<${KB}xf32> %x_scales_times:tensor<${KB}xf32>; locals %xs_in %xs_o %xs_factor %xs_r
  // x's block scales times ${factor}, the power of two AVX2's decode into f32 bits leaves out
  // of each block's products (gemv_e4m3_f32.mlir): exact, and finite for every scale an
  // activation's quantize makes but 2^120 (an amax within 15% of f32's largest), which
  // overflows here
  %x_scales_empty = tensor.empty() : tensor<${KB}xf32>
  %x_scales_times = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%x_scales : tensor<${KB}xf32>) outs(%x_scales_empty : tensor<${KB}xf32>) {
  ^bb0(%xs_in: f32, %xs_o: f32):
    %xs_factor = arith.constant ${factor} : f32
    %xs_r = arith.mulf %xs_in, %xs_factor : f32
    linalg.yield %xs_r : f32
  } -> tensor<${KB}xf32>
