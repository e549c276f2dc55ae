    // snippet: reads %${p}code:i8; defines %${p}val:f32
    // decode one E5M2 code (%${p}code : i8) to f32: an E5M2 code is the top byte of an IEEE
    // f16 (same exponent bias, inf and NaN), which the f16 -> f32 extension maps exactly.
    %${p}c16 = arith.extui %${p}code : i8 to i16
    %${p}c8 = arith.constant 8 : i16
    %${p}h_bits = arith.shli %${p}c16, %${p}c8 : i16
    %${p}h = arith.bitcast %${p}h_bits : i16 to f16
    %${p}val = arith.extf %${p}h : f16 to f32
