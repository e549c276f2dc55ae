  // snippet: reads %global_in:tensor<f32>; defines %table_enc_init:tensor<256xf32> %table_sub_init:tensor<256xf32> %table_lo_init:tensor<256xi32> %table#0:tensor<256xf32> %table#1:tensor<256xf32> %table#2:tensor<256xi32>; locals %sd %o_enc %o_sub %o_lo %code_index %code_i32 %d_code %two_m126 %two_m23 %e_m126 %e_sub %two_m150 %min_normal64 %two_p149 %zero64 %c29 %rebias %no_sign %sign_bit %e64 %q %q_valid %q_normal %q_bits %q_hi %tz_normal64 %tz_normal %q_sub_ok %q_sub_in %q_scaled %q_scaled_ok %tz_sub %tz_any %tz %neg_lo; holes enc_body
  // Per E4M3 block-scale code (all 256, from the global scale; computed once per call, looked up
  // by each block with nvfp4_block_lookup.mlir):
  // - enc: the block's element multiplier (${enc_doc});
  // - enc_sub = enc * 2^-149, the multiplier of a subnormal x's mantissa (IREE's CPU workers
  //   treat f32 subnormals as zero): formed in two exact steps when enc >= 2^23, flushed to 0
  //   otherwise, where |x * enc| < 2^-103 (code 0 either way);
  // - neg_lo = 2^31 + Tz, Tz the bits of the largest |x| whose product |x| * enc is at most
  //   2^-150, i.e. rounds to IEEE zero: a negative x has a nonzero product (TE writes it as -0)
  //   iff its bits exceed neg_lo, an integer compare that sees subnormal x too. Tz rounds
  //   2^-150 / enc down to f32 (taken in f64, whose error, 2^-53 relative, is below the 2^-46
  //   that separates the quotient from any f32 it is not equal to; the subnormal range by integer
  //   conversion, no f32 subnormal formed). A NaN or negative enc gets Tz = 2^31 - 1: no sign.
  %table_enc_init = tensor.empty() : tensor<256xf32>
  %table_sub_init = tensor.empty() : tensor<256xf32>
  %table_lo_init = tensor.empty() : tensor<256xi32>
  %table:3 = linalg.generic {
      indexing_maps = [affine_map<(c) -> ()>, affine_map<(c) -> (c)>, affine_map<(c) -> (c)>,
                       affine_map<(c) -> (c)>],
      iterator_types = ["parallel"]}
      ins(%global_in : tensor<f32>)
      outs(%table_enc_init, %table_sub_init, %table_lo_init
           : tensor<256xf32>, tensor<256xf32>, tensor<256xi32>) {
  ^bb0(%sd: f32, %o_enc: f32, %o_sub: f32, %o_lo: i32):
    %code_index = linalg.index 0 : index
    %code_i32 = arith.index_cast %code_index : index to i32
    %d_code = arith.trunci %code_i32 : i32 to i8
${enc_body}
    %two_m126 = arith.constant 0x00800000 : f32
    %two_m23 = arith.constant 0x34000000 : f32
    %e_m126 = arith.mulf %e, %two_m126 : f32
    %e_sub = arith.mulf %e_m126, %two_m23 : f32
    %two_m150 = arith.constant 0x3690000000000000 : f64
    %min_normal64 = arith.constant 0x3810000000000000 : f64
    %two_p149 = arith.constant 0x4940000000000000 : f64
    %zero64 = arith.constant 0.0 : f64
    %c29 = arith.constant 29 : i64
    %rebias = arith.constant 7516192768 : i64  // (1023 - 127) << 23
    %no_sign = arith.constant 2147483647 : i32
    %sign_bit = arith.constant -2147483648 : i32
    %e64 = arith.extf %e : f32 to f64
    %q = arith.divf %two_m150, %e64 : f64
    %q_valid = arith.cmpf oge, %q, %zero64 : f64
    %q_normal = arith.cmpf oge, %q, %min_normal64 : f64
    // normal range: the f64's bits truncated to f32's (round down), the exponent rebiased
    %q_bits = arith.bitcast %q : f64 to i64
    %q_hi = arith.shrui %q_bits, %c29 : i64
    %tz_normal64 = arith.subi %q_hi, %rebias : i64
    %tz_normal = arith.trunci %tz_normal64 : i64 to i32
    // subnormal range: floor(q / 2^-149), the mantissa (q * 2^149 < 2^23, exact)
    %q_sub_ok = arith.cmpf olt, %q, %min_normal64 : f64
    %q_sub_in = arith.andi %q_valid, %q_sub_ok : i1
    %q_scaled = arith.mulf %q, %two_p149 : f64
    %q_scaled_ok = arith.select %q_sub_in, %q_scaled, %zero64 : f64
    %tz_sub = arith.fptosi %q_scaled_ok : f64 to i32
    %tz_any = arith.select %q_normal, %tz_normal, %tz_sub : i32
    %tz = arith.select %q_valid, %tz_any, %no_sign : i32
    %neg_lo = arith.addi %tz, %sign_bit : i32
    linalg.yield %e, %e_sub, %neg_lo : f32, f32, i32
  } -> (tensor<256xf32>, tensor<256xf32>, tensor<256xi32>)
