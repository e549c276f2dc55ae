// quantize (per-tensor FP8): data = cast(x * scale), scale_inv = 1 / scale.
// The cast is an integer-only encoder (never arith.truncf, see docs/numerics.md):
// saturate in f32 (+-inf -> +-max), ulp = 2^(max(e, emin) - mbits), q = roundeven(|v| / ulp),
// code = ((max(e, emin) - emin) << mbits) + q   (a carry of q lands on the next binade),
// sign OR-ed in; NaN -> ${nan_code} (the canonical NaN, as the PTX cvt instructions give).
// IREE's CPU workers flush f32 subnormals to zero; a subnormal x = m * 2^-149 is therefore scaled
// as ((m * 2^-23) * scale) * 2^-126, which rounds once exactly as IEEE x * scale does whenever
// the product is normal (a subnormal product encodes to a signed zero either way).
func.func private @${name}(%x: tensor<${shape}xf32>, %scale: tensor<f32>)
    -> (tensor<${shape}xi8>, tensor<f32>) attributes {${attrs}} {
  %empty = tensor.empty() : tensor<${shape}xi8>
  %data = linalg.generic {
      indexing_maps = [affine_map<(${dims}) -> (${dims})>, affine_map<(${dims}) -> ()>,
                       affine_map<(${dims}) -> (${dims})>],
      iterator_types = [${parallels}]}
      ins(%x, %scale : tensor<${shape}xf32>, tensor<f32>) outs(%empty : tensor<${shape}xi8>) {
  ^bb0(%xv: f32, %s: f32, %out: i8):
    %max = arith.constant ${fmt_max} : f32
    %zero = arith.constant 0.0 : f32
    %c23 = arith.constant 23 : i32
    %c31 = arith.constant 31 : i32
    %c127 = arith.constant 127 : i32
    %c255 = arith.constant 255 : i32
    %c0 = arith.constant 0 : i32
    %sign_only = arith.constant -2147483648 : i32
    %emin = arith.constant ${emin} : i32
    %mbits = arith.constant ${mbits} : i32
    %sign_shift = arith.constant 7 : i32
    %nan_code = arith.constant ${nan_code} : i32
    %man_mask = arith.constant 8388607 : i32
    %two_m23 = arith.constant 0x34000000 : f32
    %two_m126 = arith.constant 0x00800000 : f32
    %x_bits = arith.bitcast %xv : f32 to i32
    %x_sign_bit = arith.andi %x_bits, %sign_only : i32
    %x_exp_field = arith.shrui %x_bits, %c23 : i32
    %x_exp = arith.andi %x_exp_field, %c255 : i32
    %x_is_sub = arith.cmpi eq, %x_exp, %c0 : i32
    %x_man = arith.andi %x_bits, %man_mask : i32
    %x_man_f = arith.uitofp %x_man : i32 to f32
    %t1 = arith.mulf %x_man_f, %two_m23 : f32
    %t2 = arith.mulf %t1, %s : f32
    %t3 = arith.mulf %t2, %two_m126 : f32
    %t3_bits = arith.bitcast %t3 : f32 to i32
    %sub_bits = arith.xori %t3_bits, %x_sign_bit : i32
    %v_sub = arith.bitcast %sub_bits : i32 to f32
    %v_normal = arith.mulf %xv, %s : f32
    %v = arith.select %x_is_sub, %v_sub, %v_normal : f32
    %is_nan = arith.cmpf uno, %v, %v : f32
    %v_num = arith.select %is_nan, %zero, %v : f32
    %bits = arith.bitcast %v_num : f32 to i32
    %sign = arith.shrui %bits, %c31 : i32
    %abs = math.absf %v_num : f32
    %sat = arith.minimumf %abs, %max : f32
    %sat_bits = arith.bitcast %sat : f32 to i32
    %biased = arith.shrui %sat_bits, %c23 : i32
    %exp_field = arith.andi %biased, %c255 : i32
    %e = arith.subi %exp_field, %c127 : i32
    %e_clamped = arith.maxsi %e, %emin : i32
    %ulp_exp = arith.subi %e_clamped, %mbits : i32
    %inv_ulp_biased = arith.subi %c127, %ulp_exp : i32
    %inv_ulp_bits = arith.shli %inv_ulp_biased, %c23 : i32
    %inv_ulp = arith.bitcast %inv_ulp_bits : i32 to f32
    %scaled = arith.mulf %sat, %inv_ulp : f32
    %rounded = math.roundeven %scaled : f32
    %q = arith.fptosi %rounded : f32 to i32
    %binade = arith.subi %e_clamped, %emin : i32
    %binade_bits = arith.shli %binade, %mbits : i32
    %magnitude = arith.addi %binade_bits, %q : i32
    %sign_bit = arith.shli %sign, %sign_shift : i32
    %code = arith.ori %magnitude, %sign_bit : i32
    %final = arith.select %is_nan, %nan_code, %code : i32
    %byte = arith.trunci %final : i32 to i8
    linalg.yield %byte : i8
  } -> tensor<${shape}xi8>
  %empty_s = tensor.empty() : tensor<f32>
  %scale_inv = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%scale : tensor<f32>) outs(%empty_s : tensor<f32>) {
  ^bb0(%s: f32, %out: f32):
    // 1 / scale; for scale >= 2^126 the result is an f32 subnormal, which flush-to-zero would
    // lose: divide in f64 (exact enough: 53 >= 2*24+2 makes the double rounding innocuous) and
    // round to the subnormal grid with integer arithmetic.
    %one = arith.constant 1.0 : f32
    %one64 = arith.constant 1.0 : f64
    %two_p149 = arith.constant 0x4940000000000000 : f64
    %c23_s = arith.constant 23 : i32
    %c253 = arith.constant 253 : i32
    %inv = arith.divf %one, %s : f32
    %s_bits = arith.bitcast %s : f32 to i32
    %s_exp = arith.shrui %s_bits, %c23_s : i32
    %is_sub = arith.cmpi uge, %s_exp, %c253 : i32
    %s64 = arith.extf %s : f32 to f64
    %inv64 = arith.divf %one64, %s64 : f64
    %grid = arith.mulf %inv64, %two_p149 : f64
    %rounded = math.roundeven %grid : f64
    %sub_bits = arith.fptosi %rounded : f64 to i32
    %sub_inv = arith.bitcast %sub_bits : i32 to f32
    %result = arith.select %is_sub, %sub_inv, %inv : f32
    linalg.yield %result : f32
  } -> tensor<f32>
  return %data, %scale_inv : tensor<${shape}xi8>, tensor<f32>
}
