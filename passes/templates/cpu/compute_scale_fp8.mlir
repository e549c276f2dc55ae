// compute_scale (per-tensor FP8, TE compute_scale_from_amax):
//   amax' = max(amax, eps); amax' in {0, inf, nan} -> 1; else fp8_max / amax';
//   inf -> FLT_MAX; optional power of 2: keep sign and exponent (mantissa zeroed).
func.func private @${name}(%amax: tensor<f32>) -> tensor<f32> attributes {${attrs}} {
  %empty = tensor.empty() : tensor<f32>
  %scale = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
      iterator_types = []}
      ins(%amax : tensor<f32>) outs(%empty : tensor<f32>) {
  ^bb0(%a: f32, %out: f32):
    %eps = arith.constant ${epsilon} : f32
    %fp8_max = arith.constant ${fp8_max} : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %inf = arith.constant 0x7F800000 : f32
    %flt_max = arith.constant 0x7F7FFFFF : f32
    %lt_eps = arith.cmpf olt, %a, %eps : f32
    %clamped = arith.select %lt_eps, %eps, %a : f32
    %abs = math.absf %clamped : f32
    %is_inf = arith.cmpf oeq, %abs, %inf : f32
    %is_zero = arith.cmpf oeq, %clamped, %zero : f32
    %is_nan = arith.cmpf uno, %clamped, %clamped : f32
    %keep_one_a = arith.ori %is_inf, %is_zero : i1
    %keep_one = arith.ori %keep_one_a, %is_nan : i1
    %safe = arith.select %keep_one, %one, %clamped : f32
    %quot = arith.divf %fp8_max, %safe : f32
    %quot_inf = arith.cmpf oeq, %quot, %inf : f32
    %finite = arith.select %quot_inf, %flt_max, %quot : f32
    %bits = arith.bitcast %finite : f32 to i32
    %mask = arith.constant ${pow2_mask} : i32
    %masked = arith.andi %bits, %mask : i32
    %rounded = arith.bitcast %masked : i32 to f32
    %scale = arith.select %keep_one, %one, %rounded : f32
    linalg.yield %scale : f32
  } -> tensor<f32>
  return %scale : tensor<f32>
}
