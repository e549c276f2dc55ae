    // snippet: reads %mantissa:i32 %c0:i32 %exponent:i32 %c254:i32 %is_inf:i1 %is_nan:i1 %c255:i32; defines %man_nz:i1 %not_fe:i1 %half_man:i32 %exp_zero:i1 %small:i1 %sub_small:i1 %true:i1 %not_sub_small:i1 %inc_a:i1 %inc:i1 %inc_i:i32 %e:i32 %with_inf:i32 %code:i32
    // ceil (TE float_to_e8m0): v's biased exponent, plus one when its mantissa is non-zero,
    // except at 0xFE and for v <= 2^-127 (exponent 0, mantissa <= 0x400000).
    %man_nz = arith.cmpi ne, %mantissa, %c0 : i32
    %not_fe = arith.cmpi ne, %exponent, %c254 : i32
    %half_man = arith.constant 4194304 : i32
    %exp_zero = arith.cmpi eq, %exponent, %c0 : i32
    %small = arith.cmpi ule, %mantissa, %half_man : i32
    %sub_small = arith.andi %exp_zero, %small : i1
    %true = arith.constant 1 : i1
    %not_sub_small = arith.xori %sub_small, %true : i1
    %inc_a = arith.andi %man_nz, %not_fe : i1
    %inc = arith.andi %inc_a, %not_sub_small : i1
    %inc_i = arith.extui %inc : i1 to i32
    %e = arith.addi %exponent, %inc_i : i32
    %with_inf = arith.select %is_inf, %c254, %e : i32
    %code = arith.select %is_nan, %c255, %with_inf : i32
