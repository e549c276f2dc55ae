// compute_scale (NVFP4 global, TE's reference order, f32): S = min(448 * 6 / global_amax,
// FLT_MAX), S = 1 when that is 0 (an infinite amax); S_dec = 1 / S (exact also when an f32
// subnormal). An all-zero tensor gives S = FLT_MAX.
func.func private @${name}(%amax: tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {${attrs}} {
  %e1 = tensor.empty() : tensor<f32>
  %e2 = tensor.empty() : tensor<f32>
  %r:2 = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
      iterator_types = []}
      ins(%amax : tensor<f32>) outs(%e1, %e2 : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %o1: f32, %o2: f32):
    %c2688 = arith.constant 2688.0 : f32
    %flt_max = arith.constant 0x7F7FFFFF : f32
    %zero_f = arith.constant 0.0 : f32
    %one_f = arith.constant 1.0 : f32
    %q = arith.divf %c2688, %a : f32
    %too_big = arith.cmpf ogt, %q, %flt_max : f32
    %capped = arith.select %too_big, %flt_max, %q : f32
    %is_zero = arith.cmpf oeq, %capped, %zero_f : f32
    %s = arith.select %is_zero, %one_f, %capped : f32
${reciprocal}
    linalg.yield %s, %result : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}
