// snippet: reads %x:bf16; defines %${p}w:f32
    // a bf16 value widened exactly: its bits into an f32's high half
    %${p}bits = arith.bitcast %x : bf16 to i16
    %${p}wide = arith.extui %${p}bits : i16 to i32
    %${p}c16 = arith.constant 16 : i32
    %${p}high = arith.shli %${p}wide, %${p}c16 : i32
    %${p}w = arith.bitcast %${p}high : i32 to f32
