    // snippet: reads %a_abs:i32 %c23:i32 %c0:i32 %is_nan:i1 %c255:i32; defines %round_bit:i32 %exp_mask:i32 %a_up:i32 %a_round:i32 %a_exp:i32 %emax_elem:i32 %lowered:i32 %e:i32 %code:i32
    // even (compressed-tensors, vLLM's MXFP4 reference, torchao EVEN): amax rounded to the
    // element's ${mbits} mantissa bit(s), half up (add ${round_bit} to its bits, keep the
    // exponent), then floor's rule: that exponent minus ${emax_elem}, clamped at 0; inf gives
    // 255 - ${emax_elem}, NaN 0xFF.
    %round_bit = arith.constant ${round_bit} : i32
    %exp_mask = arith.constant 2139095040 : i32
    %a_up = arith.addi %a_abs, %round_bit : i32
    %a_round = arith.andi %a_up, %exp_mask : i32
    %a_exp = arith.shrui %a_round, %c23 : i32
    %emax_elem = arith.constant ${emax_elem} : i32
    %lowered = arith.subi %a_exp, %emax_elem : i32
    %e = arith.maxsi %lowered, %c0 : i32
    %code = arith.select %is_nan, %c255, %e : i32
