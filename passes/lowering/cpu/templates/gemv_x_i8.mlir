    // snippet: reads ${val}:f32; defines %${p}narrow:i8
    // a decoded E2M1 value times 2, an integer (-12..12: exact), as a signed byte: the integer
    // the AVX2 loop multiplies (gemv_fp4_decode_i8.mlir)
    %${p}two = arith.constant 2.0 : f32
    %${p}twice = arith.mulf ${val}, %${p}two : f32
    %${p}narrow = arith.fptosi %${p}twice : f32 to i8
