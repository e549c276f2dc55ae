    // snippet: reads %c0:i32 %exponent:i32 %mantissa:i32 %c255:i32 %is_nan:i1 %is_inf:i1; defines %half_man:i32 %exp_zero:i1 %above:i1 %at_or_above:i1 %up:i1 %up_i:i32 %bumped:i32 %e:i32 %not_finite:i1 %code:i32
    // rne (PyTorch's float32 -> float8_e8m0fnu cast of v = amax / fp8_max): round v's mantissa
    // at its top bit (ties up for a normal v; a subnormal v rounds up only past half); past
    // 0xFE -> 0xFF; NaN and inf -> 0xFF.
    %half_man = arith.constant 4194304 : i32
    %exp_zero = arith.cmpi eq, %exponent, %c0 : i32
    %above = arith.cmpi ugt, %mantissa, %half_man : i32
    %at_or_above = arith.cmpi uge, %mantissa, %half_man : i32
    %up = arith.select %exp_zero, %above, %at_or_above : i1
    %up_i = arith.extui %up : i1 to i32
    %bumped = arith.addi %exponent, %up_i : i32
    %e = arith.minui %bumped, %c255 : i32
    %not_finite = arith.ori %is_nan, %is_inf : i1
    %code = arith.select %not_finite, %c255, %e : i32
