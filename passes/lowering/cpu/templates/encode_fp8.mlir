    // snippet: reads ${x}:f32 ${s}:f32; defines %${p}byte:i8
    // FP8 encoder: ${x} * ${s} -> %${p}byte, the saturating round-to-nearest-even E4M3/E5M2 code.
    // Integer-only (never arith.truncf): saturate in f32 (+-inf -> +-max), ulp =
    // 2^(max(e, emin) - mbits), q = roundeven(|v| / ulp), code = ((max(e, emin) - emin) << mbits)
    // + q (a carry of q lands on the next binade), sign OR-ed in; NaN -> ${nan_code} (the
    // canonical NaN PTX cvt writes). IREE's CPU workers flush f32 subnormals to zero: a subnormal
    // x = m * 2^-149 is scaled as ((m * 2^-23) * s) * 2^-126, which rounds once exactly as IEEE
    // x * s does whenever the product is normal (a subnormal product encodes to a signed zero
    // either way).
    %${p}max = arith.constant ${fmt_max} : f32
    %${p}zero = arith.constant 0.0 : f32
    %${p}c23 = arith.constant 23 : i32
    %${p}c31 = arith.constant 31 : i32
    %${p}c127 = arith.constant 127 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}c0 = arith.constant 0 : i32
    %${p}sign_only = arith.constant -2147483648 : i32
    %${p}emin = arith.constant ${emin} : i32
    %${p}mbits = arith.constant ${mbits} : i32
    %${p}sign_shift = arith.constant ${sign_shift} : i32
    %${p}nan_code = arith.constant ${nan_code} : i32
    %${p}man_mask = arith.constant 8388607 : i32
    %${p}two_m23 = arith.constant 0x34000000 : f32
    %${p}two_m126 = arith.constant 0x00800000 : f32
    %${p}x_bits = arith.bitcast ${x} : f32 to i32
    %${p}x_sign_bit = arith.andi %${p}x_bits, %${p}sign_only : i32
    %${p}x_exp_field = arith.shrui %${p}x_bits, %${p}c23 : i32
    %${p}x_exp = arith.andi %${p}x_exp_field, %${p}c255 : i32
    %${p}x_is_sub = arith.cmpi eq, %${p}x_exp, %${p}c0 : i32
    %${p}x_man = arith.andi %${p}x_bits, %${p}man_mask : i32
    %${p}x_man_f = arith.uitofp %${p}x_man : i32 to f32
    %${p}t1 = arith.mulf %${p}x_man_f, %${p}two_m23 : f32
    %${p}t2 = arith.mulf %${p}t1, ${s} : f32
    %${p}t3 = arith.mulf %${p}t2, %${p}two_m126 : f32
    %${p}t3_bits = arith.bitcast %${p}t3 : f32 to i32
    %${p}sub_bits = arith.xori %${p}t3_bits, %${p}x_sign_bit : i32
    %${p}v_sub = arith.bitcast %${p}sub_bits : i32 to f32
    %${p}v_normal = arith.mulf ${x}, ${s} : f32
    %${p}v = arith.select %${p}x_is_sub, %${p}v_sub, %${p}v_normal : f32
    %${p}is_nan = arith.cmpf uno, %${p}v, %${p}v : f32
    %${p}v_num = arith.select %${p}is_nan, %${p}zero, %${p}v : f32
    %${p}bits = arith.bitcast %${p}v_num : f32 to i32
    // the sign; an exact zero drops it when ${drop_zero_sign} (E2M1, as TE's cast_to_fp4x2)
    %${p}sign_raw = arith.shrui %${p}bits, %${p}c31 : i32
    // "the IEEE product is exactly +-0" (|x * s| <= 2^-150; flush-to-zero would turn a tiny
    // negative product into -0.0), decided exactly in f32: with x' = |x| * 2^126 (for a subnormal
    // x, from its bits: t1 above), |x * s| <= 2^-150 iff x' * |s| <= 2^-24, and one fma gives the
    // sign of x' * |s| - 2^-24 exactly: near 2^-24 the difference is a multiple of about 2^-70,
    // never subnormal. x' overflows to inf only when |x| >= 4, where the product is not zero
    // unless s is; s = 0 (or subnormal, read as 0 under denormals-are-zero) is tested alone.
    %${p}x_abs_f = math.absf ${x} : f32
    %${p}two_p126 = arith.constant 0x7E800000 : f32
    %${p}x_norm_up = arith.mulf %${p}x_abs_f, %${p}two_p126 : f32
    %${p}x_up = arith.select %${p}x_is_sub, %${p}t1, %${p}x_norm_up : f32
    %${p}s_abs_f = math.absf ${s} : f32
    %${p}minus_two_m24 = arith.constant 0xB3800000 : f32
    %${p}excess = math.fma %${p}x_up, %${p}s_abs_f, %${p}minus_two_m24 : f32
    %${p}below = arith.cmpf ole, %${p}excess, %${p}zero : f32
    %${p}s_is_zero = arith.cmpf oeq, %${p}s_abs_f, %${p}zero : f32
    %${p}is_zero_v = arith.ori %${p}below, %${p}s_is_zero : i1
    %${p}drop_zero_sign = arith.constant ${drop_zero_sign} : i1
    %${p}drop = arith.andi %${p}is_zero_v, %${p}drop_zero_sign : i1
    %${p}sign = arith.select %${p}drop, %${p}c0, %${p}sign_raw : i32
    %${p}abs = math.absf %${p}v_num : f32
    %${p}sat = arith.minimumf %${p}abs, %${p}max : f32
    %${p}sat_bits = arith.bitcast %${p}sat : f32 to i32
    %${p}biased = arith.shrui %${p}sat_bits, %${p}c23 : i32
    %${p}exp_field = arith.andi %${p}biased, %${p}c255 : i32
    %${p}e = arith.subi %${p}exp_field, %${p}c127 : i32
    %${p}e_clamped = arith.maxsi %${p}e, %${p}emin : i32
    %${p}ulp_exp = arith.subi %${p}e_clamped, %${p}mbits : i32
    %${p}inv_ulp_biased = arith.subi %${p}c127, %${p}ulp_exp : i32
    %${p}inv_ulp_bits = arith.shli %${p}inv_ulp_biased, %${p}c23 : i32
    %${p}inv_ulp = arith.bitcast %${p}inv_ulp_bits : i32 to f32
    %${p}scaled = arith.mulf %${p}sat, %${p}inv_ulp : f32
    // round to nearest even: |scaled| <= 2^(mbits+1) < 2^23, so adding and removing 2^23 rounds
    // it exactly in the default IEEE mode (IREE expands math.roundeven into ~25 instructions)
    %${p}magic = arith.constant 8388608.0 : f32
    %${p}shifted = arith.addf %${p}scaled, %${p}magic : f32
    %${p}rounded = arith.subf %${p}shifted, %${p}magic : f32
    %${p}q = arith.fptosi %${p}rounded : f32 to i32
    %${p}binade = arith.subi %${p}e_clamped, %${p}emin : i32
    %${p}binade_bits = arith.shli %${p}binade, %${p}mbits : i32
    %${p}magnitude = arith.addi %${p}binade_bits, %${p}q : i32
    %${p}sign_bit = arith.shli %${p}sign, %${p}sign_shift : i32
    %${p}code = arith.ori %${p}magnitude, %${p}sign_bit : i32
    %${p}final = arith.select %${p}is_nan, %${p}nan_code, %${p}code : i32
    %${p}byte = arith.trunci %${p}final : i32 to i8
