    // snippet: reads %d_code:i8 %sd:f32; defines %d64:f64 %p64:f64 %one64:f64 %r64:f64 %r32:f32 %flt_max:f32 %over:i1 %e:f32; holes decode_d sd_f64 p_f32 p_back
${decode_d}
${sd_f64}
    %d64 = arith.extf %d_val : f32 to f64
    %p64 = arith.mulf %d64, %sd_f64 : f64
${p_f32}
${p_back}
    %one64 = arith.constant 1.0 : f64
    %r64 = arith.divf %one64, %pb_f64 : f64
    %r32 = arith.truncf %r64 : f64 to f32
    %flt_max = arith.constant 0x7F7FFFFF : f32
    %over = arith.cmpf ogt, %r32, %flt_max : f32
    %e = arith.select %over, %flt_max, %r32 : f32
