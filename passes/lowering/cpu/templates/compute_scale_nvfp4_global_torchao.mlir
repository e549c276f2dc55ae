// compute_scale (NVFP4 global, torchao's nvfp4_quantize order, f32): g = global_amax / 2688
// (torchao's per_tensor_amax_to_scale, the decode scale) and 1 / g; both rounded as IEEE f32
// does, f32 subnormals included (computed in f64 from exact operands). Defined, as in torchao,
// for a finite, non-zero amax.
func.func private @${name}(%amax: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {${attrs}} {
  %e1 = tensor.empty() : tensor<f32>
  %e2 = tensor.empty() : tensor<f32>
  %r:2 = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
      iterator_types = []}
      ins(%amax : tensor<f32>) outs(%e1, %e2 : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %o1: f32, %o2: f32):
${a_f64}
    %c2688 = arith.constant 2688.0 : f64
    %g64 = arith.divf %a_f64, %c2688 : f64
    %g_abs = math.absf %g64 : f64
${g_f32}
${g_back}
    %one64 = arith.constant 1.0 : f64
    %inv64 = arith.divf %one64, %gb_f64 : f64
    %inv = arith.truncf %inv64 : f64 to f32
    linalg.yield %inv, %g_f32 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}
