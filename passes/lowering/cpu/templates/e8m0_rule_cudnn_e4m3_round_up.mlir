    // snippet: reads %v_bits:i32 %c23:i32 %c255:i32 %c0:i32 %exponent:i32 %c1:i32 %is_inf:i1 %is_nan:i1; defines %c0x7e:i32 %c0x7f:i32 %max448:f32 %cm6:i32 %c3:i32 %c6:i32 %c127_r:i32 %v_f:f32 %v_sat:f32 %sat_bits:i32 %s_exp_sh:i32 %s_exp:i32 %e_un:i32 %e_cl:i32 %ulp_exp:i32 %inv_ulp_e:i32 %inv_ulp_bits:i32 %inv_ulp:f32 %scaled:f32 %q_f:f32 %q:i32 %binade:i32 %binade_bits:i32 %code_n:i32 %code_sat:i32 %v_zero:i1 %v_exp_zero:i1 %code_sub:i32 %code_fin:i32 %with_inf:i32 %code:i32
    // cuDNN round-up into E4M3: the smallest E4M3 value >= v, saturating at 448 (0x7E); v = 0
    // gives 0x00 (a zero scale), an f32-subnormal v the smallest E4M3 subnormal (0x01), NaN 0x7F.
    %c0x7e = arith.constant 126 : i32
    %c0x7f = arith.constant 127 : i32
    %max448 = arith.constant 448.0 : f32
    %cm6 = arith.constant -6 : i32
    %c3 = arith.constant 3 : i32
    %c6 = arith.constant 6 : i32
    %c127_r = arith.constant 127 : i32
    %v_f = arith.bitcast %v_bits : i32 to f32
    %v_sat = arith.minimumf %v_f, %max448 : f32
    %sat_bits = arith.bitcast %v_sat : f32 to i32
    %s_exp_sh = arith.shrui %sat_bits, %c23 : i32
    %s_exp = arith.andi %s_exp_sh, %c255 : i32
    %e_un = arith.subi %s_exp, %c127_r : i32
    %e_cl = arith.maxsi %e_un, %cm6 : i32
    %ulp_exp = arith.subi %e_cl, %c3 : i32
    %inv_ulp_e = arith.subi %c127_r, %ulp_exp : i32
    %inv_ulp_bits = arith.shli %inv_ulp_e, %c23 : i32
    %inv_ulp = arith.bitcast %inv_ulp_bits : i32 to f32
    %scaled = arith.mulf %v_sat, %inv_ulp : f32
    %q_f = math.ceil %scaled : f32
    %q = arith.fptosi %q_f : f32 to i32
    %binade = arith.addi %e_cl, %c6 : i32
    %binade_bits = arith.shli %binade, %c3 : i32
    %code_n = arith.addi %binade_bits, %q : i32
    %code_sat = arith.minsi %code_n, %c0x7e : i32
    %v_zero = arith.cmpi eq, %v_bits, %c0 : i32
    %v_exp_zero = arith.cmpi eq, %exponent, %c0 : i32
    %code_sub = arith.select %v_zero, %c0, %c1 : i32
    %code_fin = arith.select %v_exp_zero, %code_sub, %code_sat : i32
    %with_inf = arith.select %is_inf, %c0x7e, %code_fin : i32
    %code = arith.select %is_nan, %c0x7f, %with_inf : i32
