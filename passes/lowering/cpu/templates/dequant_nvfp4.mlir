    // snippet: reads %${p}nib:i32 %${p}s_code:i8; defines %${p}deq:f32; holes decode_fp4 decode
    // dequantize one element of operand ${p}: its E2M1 code (a nibble) times its block's E4M3
    // decode scale; exact in f32.
${decode_fp4}
${decode}
    %${p}deq = arith.mulf %${p}fp4, %${p}s_val : f32
