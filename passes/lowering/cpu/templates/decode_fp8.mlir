    // snippet: reads %${p}code:i8; defines %${p}val:f32
    // decode one FP8 code (%${p}code : i8) to f32 from its bits; NaN codes give NaN
    // (arith.extf of f8 is wrong for NaN codes on llvm-cpu, see docs/numerics.md).
    %${p}c = arith.extui %${p}code : i8 to i32
    %${p}c7 = arith.constant 7 : i32
    %${p}c23 = arith.constant 23 : i32
    %${p}c31 = arith.constant 31 : i32
    %${p}mbits = arith.constant ${mbits} : i32
    %${p}man_shift = arith.constant ${man_shift} : i32
    %${p}exp_mask = arith.constant ${exp_mask} : i32
    %${p}man_mask = arith.constant ${man_mask} : i32
    %${p}mag_mask = arith.constant 127 : i32
    %${p}rebias = arith.constant ${rebias} : i32
    %${p}zero_i = arith.constant 0 : i32
    %${p}sub_ulp = arith.constant ${subnormal_ulp} : f32
    %${p}nan = arith.constant 0x7FC00000 : f32
    %${p}sign = arith.shrui %${p}c, %${p}c7 : i32
    %${p}exp_sh = arith.shrui %${p}c, %${p}mbits : i32
    %${p}exp = arith.andi %${p}exp_sh, %${p}exp_mask : i32
    %${p}man = arith.andi %${p}c, %${p}man_mask : i32
    %${p}exp32 = arith.addi %${p}exp, %${p}rebias : i32
    %${p}exp_bits = arith.shli %${p}exp32, %${p}c23 : i32
    %${p}man_bits = arith.shli %${p}man, %${p}man_shift : i32
    %${p}normal_bits = arith.ori %${p}exp_bits, %${p}man_bits : i32
    %${p}man_f = arith.uitofp %${p}man : i32 to f32
    %${p}sub_val = arith.mulf %${p}man_f, %${p}sub_ulp : f32
    %${p}sub_bits = arith.bitcast %${p}sub_val : f32 to i32
    %${p}is_sub = arith.cmpi eq, %${p}exp, %${p}zero_i : i32
    %${p}mag_bits = arith.select %${p}is_sub, %${p}sub_bits, %${p}normal_bits : i32
    %${p}sign_bit = arith.shli %${p}sign, %${p}c31 : i32
    %${p}bits = arith.ori %${p}mag_bits, %${p}sign_bit : i32
    %${p}num = arith.bitcast %${p}bits : i32 to f32
    %${p}mag = arith.andi %${p}c, %${p}mag_mask : i32
    %${p}is_nan = arith.cmpi eq, %${p}mag, %${p}mag_mask : i32
    %${p}val = arith.select %${p}is_nan, %${p}nan, %${p}num : f32
