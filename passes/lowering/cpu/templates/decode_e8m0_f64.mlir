    // snippet: reads %sc_code:i8; defines %sc32:i32 %sc64:i64 %c896:i64 %c52:i64 %c255_64:i64 %e64:i64 %pow_bits:i64 %pow64:f64 %is_nan_sc:i1 %nan64:f64 %scale64:f64
    %sc32 = arith.extui %sc_code : i8 to i32
    %sc64 = arith.extui %sc32 : i32 to i64
    %c896 = arith.constant 896 : i64
    %c52 = arith.constant 52 : i64
    %c255_64 = arith.constant 255 : i64
    %e64 = arith.addi %sc64, %c896 : i64
    %pow_bits = arith.shli %e64, %c52 : i64
    %pow64 = arith.bitcast %pow_bits : i64 to f64
    %is_nan_sc = arith.cmpi eq, %sc64, %c255_64 : i64
    %nan64 = arith.constant 0x7FF8000000000000 : f64
    %scale64 = arith.select %is_nan_sc, %nan64, %pow64 : f64
