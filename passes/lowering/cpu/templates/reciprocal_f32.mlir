    // snippet: reads %s:f32; defines %one:f32 %one64:f64 %two_p149:f64 %c23_s:i32 %c253:i32 %inv:f32 %s_bits:i32 %s_exp:i32 %is_sub:i1 %s64:f64 %inv64:f64 %grid:f64 %rounded:f64 %sub_bits:i32 %sub_inv:f32 %result:f32
    // 1 / scale; for scale >= 2^126 the result is an f32 subnormal, which flush-to-zero would
    // lose: divide in f64 (exact enough: 53 >= 2*24+2 makes the double rounding innocuous) and
    // round to the subnormal grid with integer arithmetic.
    %one = arith.constant 1.0 : f32
    %one64 = arith.constant 1.0 : f64
    %two_p149 = arith.constant 0x4940000000000000 : f64
    %c23_s = arith.constant 23 : i32
    %c253 = arith.constant 253 : i32
    %inv = arith.divf %one, %s : f32
    %s_bits = arith.bitcast %s : f32 to i32
    %s_exp = arith.shrui %s_bits, %c23_s : i32
    %is_sub = arith.cmpi uge, %s_exp, %c253 : i32
    %s64 = arith.extf %s : f32 to f64
    %inv64 = arith.divf %one64, %s64 : f64
    %grid = arith.mulf %inv64, %two_p149 : f64
    %rounded = math.roundeven %grid : f64
    %sub_bits = arith.fptosi %rounded : f64 to i32
    %sub_inv = arith.bitcast %sub_bits : i32 to f32
    %result = arith.select %is_sub, %sub_inv, %inv : f32
