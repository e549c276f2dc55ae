    // snippet: reads %${p}code:i8 %${p}s:i8; defines %${p}deq:f32; holes decode ldexp
    // dequantize one element of operand ${p}: decode its FP8 code, then multiply by
    // 2^(e - 127) of its block's E8M0 scale %${p}s (exact, on bits); a NaN scale (0xFF) gives
    // NaN.
${decode}
    %${p}e = arith.extui %${p}s : i8 to i32
    %${p}c127 = arith.constant 127 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}shift = arith.subi %${p}e, %${p}c127 : i32
${ldexp}
    %${p}nan_s = arith.constant 0x7FC00000 : f32
    %${p}scale_nan = arith.cmpi eq, %${p}e, %${p}c255 : i32
    %${p}deq = arith.select %${p}scale_nan, %${p}nan_s, %${p}l_out : f32
