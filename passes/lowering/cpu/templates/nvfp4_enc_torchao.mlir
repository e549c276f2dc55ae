    // snippet: reads %d_code:i8 %sd:f32; defines %e:f32; holes decode_d
${decode_d}
    // torchao: (1 / g) / float(d), both normal here, one f32 division
    %e = arith.divf %sd, %d_val : f32
