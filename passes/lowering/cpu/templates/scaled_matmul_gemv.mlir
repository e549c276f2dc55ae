// scaled_matmul (per-tensor FP8, one row of A, B stored [N, K]) as a matrix-vector product that
// reads B's codes as stored and decodes them in its loop (the executable @${exe},
// gemv_fp8_executable.mlir): out = (decode(a) . decode(b)) * (a_scale_inv * b_scale_inv), the
// products exact in f32 (FP8 values in bf16), f32 sums; no decoded copy of B exists.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %a_scale_inv: tensor<f32>,
                            %b: tensor<${N}x${K}xi8>, %b_scale_inv: tensor<f32>)
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
${activation}
  %n = arith.constant ${N} : index
  %acc = flow.dispatch @${exe}::@${fn}[%n](%a_bf16, %b)
      : (tensor<${K}xbf16>, tensor<${N}x${K}xi8>) -> tensor<${N}xf32>
  %out_empty = tensor.empty() : tensor<${N}xf32>
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>,
                       affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%acc, %a_scale_inv, %b_scale_inv : tensor<${N}xf32>, tensor<f32>, tensor<f32>)
      outs(%out_empty : tensor<${N}xf32>) {
  ^bb0(%v: f32, %sa: f32, %sb: f32, %o: f32):
    %alpha = arith.mulf %sa, %sb : f32
    %r = arith.mulf %v, %alpha : f32
    linalg.yield %r : f32
  } -> tensor<${N}xf32>
  %out = tensor.expand_shape %scaled [[${out_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
