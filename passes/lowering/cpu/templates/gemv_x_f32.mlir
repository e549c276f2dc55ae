    // snippet: reads ${val}:f32; defines %${p}narrow:f32
    // a decoded value times ${factor} (exact: a power of two), the factor the weights' decode
    // through f16 leaves out
    %${p}factor = arith.constant ${factor} : f32
    %${p}narrow = arith.mulf ${val}, %${p}factor : f32
