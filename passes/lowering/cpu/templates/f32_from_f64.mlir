    // snippet: reads ${src}:f64; defines %${p}f32:f32
    // %${p}f32 = ${src} (f64, >= 0) rounded to f32 as IEEE does, subnormal results included
    // (rounded to the 2^-149 grid with integer arithmetic: flush-to-zero would lose them)
    %${p}min_normal = arith.constant 0x3810000000000000 : f64
    %${p}two_p149 = arith.constant 0x4940000000000000 : f64
    %${p}is_normal = arith.cmpf oge, ${src}, %${p}min_normal : f64
    %${p}normal = arith.truncf ${src} : f64 to f32
    %${p}grid = arith.mulf ${src}, %${p}two_p149 : f64
    %${p}grid_r = math.roundeven %${p}grid : f64
    %${p}sub_bits = arith.fptosi %${p}grid_r : f64 to i32
    %${p}sub = arith.bitcast %${p}sub_bits : i32 to f32
    %${p}f32 = arith.select %${p}is_normal, %${p}normal, %${p}sub : f32
