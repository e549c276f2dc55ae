    // snippet: reads ${x}:f32 ${s}:f32 ${s_sub}:f32 ${neg_lo}:i32; defines %${p}byte:i8
    // E2M1 encoder, TE's cast_to_fp4x2 on the IEEE product v = ${x} * ${s} -> %${p}byte (the
    // code, 0-15), with the block's values from nvfp4_block_table.mlir: ${s} (enc), ${s_sub}
    // (enc * 2^-149 or 0) and ${neg_lo} (2^31 + the bits of the largest |x| with a zero product).
    // The magnitude is |v| rounded to nearest even on E2M1's grid, as TE's table of thresholds
    // (0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4, past 5 -> 6);
    // NaN -> +0. Sign (code + 8): x negative, not NaN, and the IEEE product not exactly zero (TE
    // writes -0.0 as +0 but a negative subnormal product as -0).
    // IREE's CPU workers treat f32 subnormals as zero (DAZ/FTZ), so a subnormal x = m * 2^-149 is
    // scaled as float(m) * ${s_sub}, one rounding (exact whenever the product is normal; a smaller
    // product is code 0 either way).
    %${p}abs_mask = arith.constant 2147483647 : i32
    %${p}min_normal = arith.constant 8388608 : i32
    %${p}c0 = arith.constant 0 : i32
    %${p}c8 = arith.constant 8 : i32
    %${p}zero_f = arith.constant 0.0 : f32
    %${p}x_bits = arith.bitcast ${x} : f32 to i32
    %${p}x_abs_bits = arith.andi %${p}x_bits, %${p}abs_mask : i32
    %${p}x_abs = arith.bitcast %${p}x_abs_bits : i32 to f32
    %${p}x_is_sub = arith.cmpi ult, %${p}x_abs_bits, %${p}min_normal : i32
    %${p}man_f = arith.sitofp %${p}x_abs_bits : i32 to f32
    %${p}a_sub = arith.mulf %${p}man_f, ${s_sub} : f32
    %${p}a_normal = arith.mulf %${p}x_abs, ${s} : f32
    %${p}a = arith.select %${p}x_is_sub, %${p}a_sub, %${p}a_normal : f32
    // NaN (and only NaN: a >= 0) -> 0; the compare-and-select is one max instruction on x86
    %${p}a_pos = arith.cmpf ogt, %${p}a, %${p}zero_f : f32
    %${p}a_num = arith.select %${p}a_pos, %${p}a, %${p}zero_f : f32
    // magnitude: round |v| to E2M1's step (0.5 below 2, 1 below 4, 2 above) by adding and
    // removing C = 2^22, 2^23 or 2^24 (RNE in hardware; C from |v|'s exponent, clamped), giving
    // r in {0, 0.5, 1, 1.5, 2, 3, 4, 6, 8, ...}; the code is then read off the bits of r + 2
    // (2, 2.5, 3, 3.5, 4, 5, 6, 8: consecutive codes after >> 21), capped at 7 (saturation, inf).
    %${p}inf_bits = arith.constant 2139095040 : i32  // also the exponent field's mask
    %${p}exp_lo = arith.constant 1065353216 : i32
    %${p}exp_hi = arith.constant 1082130432 : i32
    %${p}c_shift = arith.constant 184549376 : i32
    %${p}two_f = arith.constant 2.0 : f32
    %${p}c21 = arith.constant 21 : i32
    %${p}c512 = arith.constant 512 : i32
    %${p}c7 = arith.constant 7 : i32
    %${p}a_bits = arith.bitcast %${p}a_num : f32 to i32
    %${p}a_exp = arith.andi %${p}a_bits, %${p}inf_bits : i32
    %${p}a_exp_lo = arith.maxui %${p}a_exp, %${p}exp_lo : i32
    %${p}a_exp_c = arith.minui %${p}a_exp_lo, %${p}exp_hi : i32
    %${p}magic_bits = arith.addi %${p}a_exp_c, %${p}c_shift : i32
    %${p}magic = arith.bitcast %${p}magic_bits : i32 to f32
    %${p}shifted = arith.addf %${p}a_num, %${p}magic : f32
    %${p}r = arith.subf %${p}shifted, %${p}magic : f32
    %${p}r2 = arith.addf %${p}r, %${p}two_f : f32
    %${p}r2_bits = arith.bitcast %${p}r2 : f32 to i32
    %${p}r2_hi = arith.shrui %${p}r2_bits, %${p}c21 : i32
    %${p}steps = arith.subi %${p}r2_hi, %${p}c512 : i32
    %${p}mag = arith.minui %${p}steps, %${p}c7 : i32
    // sign: as unsigned, neg_lo < x's bits <= -inf's (negative NaNs lie above)
    %${p}neg_inf_bits = arith.constant -8388608 : i32
    %${p}above_zero = arith.cmpi ugt, %${p}x_bits, ${neg_lo} : i32
    %${p}not_nan = arith.cmpi ule, %${p}x_bits, %${p}neg_inf_bits : i32
    %${p}signed = arith.andi %${p}above_zero, %${p}not_nan : i1
    %${p}sign = arith.select %${p}signed, %${p}c8, %${p}c0 : i32
    %${p}code = arith.ori %${p}mag, %${p}sign : i32
    %${p}byte = arith.trunci %${p}code : i32 to i8
