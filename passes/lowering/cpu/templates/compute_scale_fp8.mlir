// compute_scale (per-tensor FP8, TE compute_scale_from_amax):
//   amax' = max(amax, eps); amax' in {0, inf, nan} -> 1; else fp8_max / amax';
//   inf -> FLT_MAX; optional power of 2: keep sign and exponent (mantissa zeroed).
// Tests on amax use its bits (exact under flush-to-zero); a subnormal amax gives an infinite
// quotient in IEEE arithmetic, so FLT_MAX directly.
// Elementwise: one amax per tensor (0-d) or per block (a grid).
func.func private @${name}(%amax: ${type}) -> ${type} attributes {${attrs}} {${amax_dims}
  %empty = tensor.empty(${sizes}) : ${type}
  %scale = linalg.generic {
      indexing_maps = [${map}, ${map}],
      iterator_types = [${iterators}]}
      ins(%amax : ${type}) outs(%empty : ${type}) {
  ^bb0(%a: f32, %out: f32):
    %eps_bits = arith.constant ${epsilon_bits} : i32
    %fp8_max = arith.constant ${fp8_max} : f32
    %one = arith.constant 1.0 : f32
    %flt_max = arith.constant 0x7F7FFFFF : f32
    %inf_f = arith.constant 0x7F800000 : f32
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %exp_mask = arith.constant 2139095040 : i32
    %c0 = arith.constant 0 : i32
    %a_bits = arith.bitcast %a : f32 to i32
    %lt_eps = arith.cmpi slt, %a_bits, %eps_bits : i32
    %clamped_bits = arith.select %lt_eps, %eps_bits, %a_bits : i32
    %abs = arith.andi %clamped_bits, %abs_mask : i32
    %is_zero = arith.cmpi eq, %abs, %c0 : i32
    %is_special = arith.cmpi uge, %abs, %inf_bits : i32
    %keep_one = arith.ori %is_zero, %is_special : i1
    %exp = arith.andi %abs, %exp_mask : i32
    %is_subnormal = arith.cmpi eq, %exp, %c0 : i32
    %clamped = arith.bitcast %clamped_bits : i32 to f32
    %safe = arith.select %keep_one, %one, %clamped : f32
    %quot = arith.divf %fp8_max, %safe : f32
    %quot_inf = arith.cmpf oeq, %quot, %inf_f : f32
    %too_big = arith.ori %quot_inf, %is_subnormal : i1
    %finite = arith.select %too_big, %flt_max, %quot : f32
    %bits = arith.bitcast %finite : f32 to i32
    %mask = arith.constant ${pow2_mask} : i32
    %masked = arith.andi %bits, %mask : i32
    %rounded = arith.bitcast %masked : i32 to f32
    %scale = arith.select %keep_one, %one, %rounded : f32
    linalg.yield %scale : f32
  } -> ${type}
  return %scale : ${type}
}
