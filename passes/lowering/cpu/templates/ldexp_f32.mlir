    // snippet: reads ${src}:f32 ${k}:i32; defines %${p}out:f32
    // %${p}out = ${src} * 2^${k} exactly, on bits (flush-to-zero proof): an f32-subnormal input
    // is renormalized from its integer mantissa; a result past the f32 range becomes +-inf, one
    // below the normal range +-0 (both encode to the same FP8 code as the IEEE result). NaN and inf
    // pass through.
    %${p}c23 = arith.constant 23 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}c0 = arith.constant 0 : i32
    %${p}m149 = arith.constant -149 : i32
    %${p}man_mask = arith.constant 8388607 : i32
    %${p}sign_mask = arith.constant -2147483648 : i32
    %${p}inf = arith.constant 2139095040 : i32
    %${p}bits = arith.bitcast ${src} : f32 to i32
    %${p}sign = arith.andi %${p}bits, %${p}sign_mask : i32
    %${p}exp_sh = arith.shrui %${p}bits, %${p}c23 : i32
    %${p}exp = arith.andi %${p}exp_sh, %${p}c255 : i32
    %${p}man = arith.andi %${p}bits, %${p}man_mask : i32
    %${p}is_sub = arith.cmpi eq, %${p}exp, %${p}c0 : i32
    %${p}special = arith.cmpi eq, %${p}exp, %${p}c255 : i32
    // a subnormal m * 2^-149 = float(m) * 2^-149: float(m) is exact and normal (or zero)
    %${p}man_f = arith.uitofp %${p}man : i32 to f32
    %${p}mf_bits = arith.bitcast %${p}man_f : f32 to i32
    %${p}mf_exp_sh = arith.shrui %${p}mf_bits, %${p}c23 : i32
    %${p}mf_exp = arith.andi %${p}mf_exp_sh, %${p}c255 : i32
    %${p}mf_man = arith.andi %${p}mf_bits, %${p}man_mask : i32
    %${p}sub_exp = arith.addi %${p}mf_exp, %${p}m149 : i32
    %${p}src_exp = arith.select %${p}is_sub, %${p}sub_exp, %${p}exp : i32
    %${p}src_man = arith.select %${p}is_sub, %${p}mf_man, %${p}man : i32
    %${p}is_zero = arith.cmpi eq, %${p}bits, %${p}sign : i32
    %${p}new_exp = arith.addi %${p}src_exp, ${k} : i32
    %${p}too_big = arith.cmpi sge, %${p}new_exp, %${p}c255 : i32
    %${p}too_small = arith.cmpi sle, %${p}new_exp, %${p}c0 : i32
    %${p}exp_field = arith.shli %${p}new_exp, %${p}c23 : i32
    %${p}normal_mag = arith.ori %${p}exp_field, %${p}src_man : i32
    %${p}mag_a = arith.select %${p}too_big, %${p}inf, %${p}normal_mag : i32
    %${p}mag_b = arith.select %${p}too_small, %${p}c0, %${p}mag_a : i32
    %${p}mag = arith.select %${p}is_zero, %${p}c0, %${p}mag_b : i32
    %${p}scaled_bits = arith.ori %${p}sign, %${p}mag : i32
    %${p}res_bits = arith.select %${p}special, %${p}bits, %${p}scaled_bits : i32
    %${p}out = arith.bitcast %${p}res_bits : i32 to f32
