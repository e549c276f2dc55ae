    // snippet: reads ${x}:f32 ${s}:i8; defines %${p}result:i8; holes encode
    // one element ${x} cast with its block's E8M0 scale code ${s}
    // the multiplier 2^(127 - e) is a normal f32 for 1 <= e <= 253 (the encoder's multiply is then
    // exact: see encode_fp8.mlir), 1 for e = 0; e = 254 (only an inf amax) would need the
    // subnormal 2^-127, which flush-to-zero reads as 0: (x * 0.5) * 2^-126 instead (exact, and
    // an x this halving pushes below the normal range encodes to zero either way)
    %${p}scale_e = arith.extui ${s} : i8 to i32
    %${p}e_c127 = arith.constant 127 : i32
    %${p}c254_e = arith.constant 254 : i32
    %${p}c255_e = arith.constant 255 : i32
    %${p}c23_e = arith.constant 23 : i32
    %${p}e_zero = arith.constant 0 : i32
    %${p}scale_is_zero = arith.cmpi eq, %${p}scale_e, %${p}e_zero : i32
    %${p}is_fe = arith.cmpi eq, %${p}scale_e, %${p}c254_e : i32
    %${p}mult_exp = arith.subi %${p}c254_e, %${p}scale_e : i32
    %${p}mult_exp_fe = arith.constant 1 : i32
    %${p}mult_exp_sel = arith.select %${p}is_fe, %${p}mult_exp_fe, %${p}mult_exp : i32
    %${p}mult_bits = arith.shli %${p}mult_exp_sel, %${p}c23_e : i32
    %${p}mult_raw = arith.bitcast %${p}mult_bits : i32 to f32
    %${p}one_m = arith.constant 1.0 : f32
    %${p}mult = arith.select %${p}scale_is_zero, %${p}one_m, %${p}mult_raw : f32
    %${p}half = arith.constant 0.5 : f32
    %${p}in_half = arith.mulf ${x}, %${p}half : f32
    %${p}x_in = arith.select %${p}is_fe, %${p}in_half, ${x} : f32
${encode}
    %${p}scale_is_nan = arith.cmpi eq, %${p}scale_e, %${p}c255_e : i32
    %${p}nan_byte = arith.constant ${nan_code} : i8
    %${p}result = arith.select %${p}scale_is_nan, %${p}nan_byte, %${p}byte : i8
