    // floor (OCP MX, torchao FLOOR): amax's own biased exponent minus ${emax_elem}
    // (= floor(log2 fp8_max)), clamped at 0; inf gives 255 - ${emax_elem}, NaN 0xFF.
    %a_exp = arith.shrui %a_abs, %c23 : i32
    %emax_elem = arith.constant ${emax_elem} : i32
    %lowered = arith.subi %a_exp, %emax_elem : i32
    %e = arith.maxsi %lowered, %c0 : i32
    %code = arith.select %is_nan, %c255, %e : i32
