    // snippet: reads ${val}:f32; defines %${p}narrow:f32
    // a decoded value times ${factor} (exact: a power of two), the share of the factor the
    // weights' decode into f32 bits leaves out that x carries (gemv.X_FACTOR)
    %${p}factor = arith.constant ${factor} : f32
    %${p}narrow = arith.mulf ${val}, %${p}factor : f32
