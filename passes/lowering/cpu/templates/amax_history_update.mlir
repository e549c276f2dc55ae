// amax_history_update (TE DelayedScaling, one call = one step), given this call's amax:
//   h = history with slot 0 := amax
//   amax_for_scale = max(h) (algo max) or h[0] (most_recent)
//   scale' = (fp8_max / amax_for_scale) / 2^margin, the previous scale kept when amax_for_scale is
//   0 or not finite, an infinite quotient -> FLT_MAX (a subnormal amax gives one: tested on bits)
//   history' = roll(h, -1) (slot i takes slot i+1, the last takes slot 0), then slot 0 := 0.
// Rejected amax (recipe options, both off by default = TE): amax is recorded as 0 (as for an
// all-zero input) when
//   skip_non_finite and amax is not finite, or
//   outlier_factor F > 0 and (amax is not finite, or M >= 2^-126 and f64(amax) > F * f64(M)),
// M = max of the old slots 1.. (the past amaxes the update uses; a history of zeros or of f32
// subnormals has none to compare with, so it accepts anything: the first calls are recorded).
func.func private @${name}(%history: tensor<${length}xf32>, %amax: tensor<f32>, %scale: tensor<f32>)
    -> (tensor<${length}xf32>, tensor<f32>) attributes {${attrs}} {
  %c0 = arith.constant 0 : index
  %zero_i = arith.constant 0 : i32
  %empty_i = tensor.empty() : tensor<i32>
  %init = linalg.fill ins(%zero_i : i32) outs(%empty_i : tensor<i32>) -> tensor<i32>
  // max over slots 1.. of the old history, on bit patterns (values are >= 0, never NaN).
  %rest_max = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
      iterator_types = ["reduction"]}
      ins(%history : tensor<${length}xf32>) outs(%init : tensor<i32>) {
  ^bb0(%v: f32, %acc: i32):
    %i = linalg.index 0 : index
    %c0_i = arith.constant 0 : index
    %zero = arith.constant 0 : i32
    %is_first = arith.cmpi eq, %i, %c0_i : index
    %bits = arith.bitcast %v : f32 to i32
    %val = arith.select %is_first, %zero, %bits : i32
    %m = arith.maxui %acc, %val : i32
    linalg.yield %m : i32
  } -> tensor<i32>
  // This call's amax as recorded: 0 where rejected.
  %empty_r = tensor.empty() : tensor<f32>
  %recorded = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>],
      iterator_types = []}
      ins(%amax, %rest_max : tensor<f32>, tensor<i32>) outs(%empty_r : tensor<f32>) {
  ^bb0(%a_in: f32, %rest: i32, %out: f32):
    %skip_non_finite = arith.constant ${skip_non_finite} : i1
    %factor = arith.constant ${outlier_factor} : f64
    %zero64 = arith.constant 0.0 : f64
    %zero_f = arith.constant 0.0 : f32
    %inf_bits = arith.constant 2139095040 : i32
    %min_normal_bits = arith.constant 8388608 : i32
    %a_bits = arith.bitcast %a_in : f32 to i32
    %not_finite = arith.cmpi uge, %a_bits, %inf_bits : i32
    %factor_on = arith.cmpf ogt, %factor, %zero64 : f64
    %has_past = arith.cmpi uge, %rest, %min_normal_bits : i32
    // M is normal (or inf) and F >= 1, so F * M is never subnormal; a subnormal amax (which a
    // flushing extf may read as 0) is below it either way.
    %m_f = arith.bitcast %rest : i32 to f32
    %m64 = arith.extf %m_f : f32 to f64
    %limit = arith.mulf %factor, %m64 : f64
    %a64 = arith.extf %a_in : f32 to f64
    %above = arith.cmpf ogt, %a64, %limit : f64
    %far = arith.andi %has_past, %above : i1
    %outlier = arith.ori %not_finite, %far : i1
    %reject_outlier = arith.andi %factor_on, %outlier : i1
    %reject_non_finite = arith.andi %skip_non_finite, %not_finite : i1
    %reject = arith.ori %reject_outlier, %reject_non_finite : i1
    %r = arith.select %reject, %zero_f, %a_in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %empty_s = tensor.empty() : tensor<f32>
  %new_scale = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>,
                       affine_map<() -> ()>],
      iterator_types = []}
      ins(%recorded, %rest_max, %scale : tensor<f32>, tensor<i32>, tensor<f32>)
      outs(%empty_s : tensor<f32>) {
  ^bb0(%a: f32, %rest: i32, %prev: f32, %out: f32):
    %use_max = arith.constant ${use_max} : i1
    %fp8_max = arith.constant ${fp8_max} : f32
    %inv_margin = arith.constant ${inv_margin} : f32
    %flt_max = arith.constant 0x7F7FFFFF : f32
    %inf_f = arith.constant 0x7F800000 : f32
    %inf_bits = arith.constant 2139095040 : i32
    %exp_mask = arith.constant 2139095040 : i32
    %zero = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %a_bits = arith.bitcast %a : f32 to i32
    %max_bits = arith.maxui %a_bits, %rest : i32
    %chosen = arith.select %use_max, %max_bits, %a_bits : i32
    %is_zero = arith.cmpi eq, %chosen, %zero : i32
    %not_finite = arith.cmpi uge, %chosen, %inf_bits : i32
    %keep = arith.ori %is_zero, %not_finite : i1
    %exp = arith.andi %chosen, %exp_mask : i32
    %is_subnormal = arith.cmpi eq, %exp, %zero : i32
    %amax_f = arith.bitcast %chosen : i32 to f32
    %safe = arith.select %keep, %one, %amax_f : f32
    %quot = arith.divf %fp8_max, %safe : f32
    %quot_inf = arith.cmpf oeq, %quot, %inf_f : f32
    %overflow = arith.ori %quot_inf, %is_subnormal : i1
    %margined = arith.mulf %quot, %inv_margin : f32
    %finite = arith.select %overflow, %flt_max, %margined : f32
    %result = arith.select %keep, %prev, %finite : f32
    linalg.yield %result : f32
  } -> tensor<f32>
  %empty_h = tensor.empty() : tensor<${length}xf32>
  %new_history = linalg.generic {
      indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%recorded : tensor<f32>) outs(%empty_h : tensor<${length}xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %c0_i = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %len = arith.constant ${length} : index
    %zero_f = arith.constant 0.0 : f32
    %next = arith.addi %i, %c1 : index
    %src = arith.remui %next, %len : index
    %old = tensor.extract %history[%src] : tensor<${length}xf32>
    %src_is_first = arith.cmpi eq, %src, %c0_i : index
    %moved = arith.select %src_is_first, %a, %old : f32
    %is_first = arith.cmpi eq, %i, %c0_i : index
    %v = arith.select %is_first, %zero_f, %moved : f32
    linalg.yield %v : f32
  } -> tensor<${length}xf32>
  return %new_history, %new_scale : tensor<${length}xf32>, tensor<f32>
}
