    // snippet: reads %a_abs:i32 %c23:i32 %c0:i32 %is_nan:i1 %c255:i32; defines %a_exp:i32 %emax_elem:i32 %lowered:i32 %e:i32 %code:i32
    // floor (OCP MX, torchao FLOOR): amax's own biased exponent minus ${emax_elem}
    // (= floor(log2 fp8_max)), clamped at 0; inf gives 255 - ${emax_elem}, NaN 0xFF.
    %a_exp = arith.shrui %a_abs, %c23 : i32
    %emax_elem = arith.constant ${emax_elem} : i32
    %lowered = arith.subi %a_exp, %emax_elem : i32
    %e = arith.maxsi %lowered, %c0 : i32
    %code = arith.select %is_nan, %c255, %e : i32
