${decode_d}
    // torchao: (1 / g) / float(d), both normal here, one f32 division
    %e = arith.divf %sd, %d_val : f32
