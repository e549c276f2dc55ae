    // snippet: reads ${val}:f32; defines %${p}narrow:bf16
    // a decoded value as bf16 (exact for FP8 and E2M1 values)
    %${p}narrow = arith.truncf ${val} : f32 to bf16
