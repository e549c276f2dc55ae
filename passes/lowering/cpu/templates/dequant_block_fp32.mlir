    // snippet: reads %${p}code:i8 %${p}s:f32; defines %${p}deq:f32; holes decode
    // dequantize one element of operand ${p}: its FP8 value times its block's scale_inv %${p}s.
${decode}
    %${p}deq = arith.mulf %${p}val, %${p}s : f32
