// amax_history_update (TE DelayedScaling, one call = one step), given this call's amax:
//   h = history with slot 0 := amax
//   amax_for_scale = max(h) (algo max) or h[0] (most_recent)
//   scale' = (fp8_max / amax_for_scale) / 2^margin, the previous scale kept when amax_for_scale is
//   0 or not finite, an infinite quotient -> FLT_MAX (a subnormal amax gives one: tested on bits)
//   history' = roll(h, -1) (slot i takes slot i+1, the last takes slot 0), then slot 0 := 0.
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
  %empty_s = tensor.empty() : tensor<f32>
  %new_scale = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>,
                       affine_map<() -> ()>],
      iterator_types = []}
      ins(%amax, %rest_max, %scale : tensor<f32>, tensor<i32>, tensor<f32>)
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
      ins(%amax : tensor<f32>) outs(%empty_h : tensor<${length}xf32>) {
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
