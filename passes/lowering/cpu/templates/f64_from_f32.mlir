    // snippet: reads ${src}:f32; defines %${p}f64:f64
    // %${p}f64 = the exact value of the f32 ${src} in f64, read from its bits (an f32 subnormal
    // is m * 2^-149; flush-to-zero conversions would lose it)
    %${p}bits = arith.bitcast ${src} : f32 to i32
    %${p}c23 = arith.constant 23 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}c0 = arith.constant 0 : i32
    %${p}man_mask = arith.constant 8388607 : i32
    %${p}two_m149 = arith.constant 0x36A0000000000000 : f64
    %${p}exp_sh = arith.shrui %${p}bits, %${p}c23 : i32
    %${p}exp = arith.andi %${p}exp_sh, %${p}c255 : i32
    %${p}man = arith.andi %${p}bits, %${p}man_mask : i32
    %${p}is_sub = arith.cmpi eq, %${p}exp, %${p}c0 : i32
    %${p}man64 = arith.uitofp %${p}man : i32 to f64
    %${p}sub64 = arith.mulf %${p}man64, %${p}two_m149 : f64
    %${p}norm64 = arith.extf ${src} : f32 to f64
    %${p}mag64 = arith.select %${p}is_sub, %${p}sub64, %${p}norm64 : f64
    %${p}sign_mask = arith.constant -2147483648 : i32
    %${p}sign = arith.andi %${p}bits, %${p}sign_mask : i32
    %${p}negative = arith.cmpi ne, %${p}sign, %${p}c0 : i32
    %${p}neg64 = arith.negf %${p}mag64 : f64
    %${p}f64 = arith.select %${p}negative, %${p}neg64, %${p}mag64 : f64
