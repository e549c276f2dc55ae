    // snippet: reads %${p}nib:i32 %${p}s_code:i8; defines %${p}deq:f32; holes decode_fp4 ldexp
    // dequantize one element of operand ${p}: its E2M1 code (a nibble) times 2^(e - 127) of its
    // block's E8M0 scale e (exact, on bits); a NaN scale (0xFF) gives NaN.
${decode_fp4}
    %${p}se = arith.extui %${p}s_code : i8 to i32
    %${p}c127 = arith.constant 127 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}shift = arith.subi %${p}se, %${p}c127 : i32
${ldexp}
    %${p}nan_s = arith.constant 0x7FC00000 : f32
    %${p}scale_nan = arith.cmpi eq, %${p}se, %${p}c255 : i32
    %${p}deq = arith.select %${p}scale_nan, %${p}nan_s, %${p}l_out : f32
