    // snippet: reads ${code}:i8; defines %${p}f32:f32
    // an E8M0 scale code's value in f32: 2^(e - 127), 255 NaN (0, 2^-127, gives 0: no f32 normal)
    %${p}e = arith.extui ${code} : i8 to i32
    %${p}c23 = arith.constant 23 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}nan = arith.constant 0x7FC00000 : f32
    %${p}bits = arith.shli %${p}e, %${p}c23 : i32
    %${p}pow2 = arith.bitcast %${p}bits : i32 to f32
    %${p}is_nan = arith.cmpi eq, %${p}e, %${p}c255 : i32
    %${p}f32 = arith.select %${p}is_nan, %${p}nan, %${p}pow2 : f32
