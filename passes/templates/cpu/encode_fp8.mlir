    // FP8 encoder: ${x} * ${s} -> %byte, the saturating round-to-nearest-even E4M3/E5M2 code.
    // Integer-only (never arith.truncf): saturate in f32 (+-inf -> +-max), ulp =
    // 2^(max(e, emin) - mbits), q = roundeven(|v| / ulp), code = ((max(e, emin) - emin) << mbits)
    // + q (a carry of q lands on the next binade), sign OR-ed in; NaN -> ${nan_code} (the
    // canonical NaN PTX cvt writes). IREE's CPU workers flush f32 subnormals to zero: a subnormal
    // x = m * 2^-149 is scaled as ((m * 2^-23) * s) * 2^-126, which rounds once exactly as IEEE
    // x * s does whenever the product is normal (a subnormal product encodes to a signed zero
    // either way).
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
    %x_bits = arith.bitcast ${x} : f32 to i32
    %x_sign_bit = arith.andi %x_bits, %sign_only : i32
    %x_exp_field = arith.shrui %x_bits, %c23 : i32
    %x_exp = arith.andi %x_exp_field, %c255 : i32
    %x_is_sub = arith.cmpi eq, %x_exp, %c0 : i32
    %x_man = arith.andi %x_bits, %man_mask : i32
    %x_man_f = arith.uitofp %x_man : i32 to f32
    %t1 = arith.mulf %x_man_f, %two_m23 : f32
    %t2 = arith.mulf %t1, ${s} : f32
    %t3 = arith.mulf %t2, %two_m126 : f32
    %t3_bits = arith.bitcast %t3 : f32 to i32
    %sub_bits = arith.xori %t3_bits, %x_sign_bit : i32
    %v_sub = arith.bitcast %sub_bits : i32 to f32
    %v_normal = arith.mulf ${x}, ${s} : f32
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
