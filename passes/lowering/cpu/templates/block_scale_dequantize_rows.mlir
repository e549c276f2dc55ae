// block_scale_dequantize of E4M3 codes with E8M0 scales in 1x${bk} blocks along rows whose
// length is a whole number of blocks: each row's blocks as a dim of their own, the scale read
// once per block (broadcast along it), so the body is elementwise and vectorizes. decode(y) *
// 2^(e-127) on bits: an E4M3 value (4 significant bits, ulp >= 2^-9) times 2^(e-127) (e >= 0)
// has its lowest bit at or above 2^-136, so it is an f32 exactly, normal or subnormal (built
// here, not flushed); past the f32 range it is inf, as the f64 product rounds; E8M0 0xFF and
// NaN codes give NaN. The same values, bit for bit, as the generic block_scale_dequantize.
func.func private @${name}(%y: tensor<${M}x${K}xi8>, %scale: tensor<${M}x${Kb}xi8>)
    -> tensor<${M}x${K}xf32> attributes {${attrs}} {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [${M}, ${Kb}, ${bk}]
      : tensor<${M}x${K}xi8> into tensor<${M}x${Kb}x${bk}xi8>
  %empty = tensor.empty() : tensor<${M}x${Kb}x${bk}xf32>
  %out3 = linalg.generic {
      indexing_maps = [affine_map<(m, b, i) -> (m, b, i)>, affine_map<(m, b, i) -> (m, b)>,
                       affine_map<(m, b, i) -> (m, b, i)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y3, %scale : tensor<${M}x${Kb}x${bk}xi8>, tensor<${M}x${Kb}xi8>)
      outs(%empty : tensor<${M}x${Kb}x${bk}xf32>) {
  ^bb0(%y_code: i8, %sc_code: i8, %o: f32):
${decode_y}
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c23 = arith.constant 23 : i32
    %c127 = arith.constant 127 : i32
    %c255 = arith.constant 255 : i32
    %implicit = arith.constant 8388608 : i32
    %man_mask = arith.constant 8388607 : i32
    %sign_mask = arith.constant -2147483648 : i32
    %inf = arith.constant 2139095040 : i32
    %nan_f = arith.constant 0x7FC00000 : f32
    %e = arith.extui %sc_code : i8 to i32
    %k = arith.subi %e, %c127 : i32
    %bits = arith.bitcast %y_val : f32 to i32
    %sign = arith.andi %bits, %sign_mask : i32
    %mag_in = arith.xori %bits, %sign : i32
    %is_zero = arith.cmpi eq, %mag_in, %c0 : i32
    // decoded E4M3 values are normal f32s (or zero, or NaN): exponent and mantissa from bits
    %exp = arith.shrui %mag_in, %c23 : i32
    %man = arith.andi %mag_in, %man_mask : i32
    %new_exp = arith.addi %exp, %k : i32
    %too_big = arith.cmpi sge, %new_exp, %c255 : i32
    %normal = arith.cmpi sgt, %new_exp, %c0 : i32
    %exp_field = arith.shli %new_exp, %c23 : i32
    %normal_mag = arith.ori %exp_field, %man : i32
    // subnormal result: the significand (implicit bit set) shifted right by 1 - new_exp; no bit
    // is lost (see above), and new_exp >= -9 here (the code >= 2^-9, the scale >= 2^-127)
    %shift = arith.subi %c1, %new_exp : i32
    %significand = arith.ori %man, %implicit : i32
    %safe_shift = arith.select %normal, %c0, %shift : i32
    %sub_mag = arith.shrui %significand, %safe_shift : i32
    %mag_a = arith.select %normal, %normal_mag, %sub_mag : i32
    %mag_b = arith.select %too_big, %inf, %mag_a : i32
    %mag = arith.select %is_zero, %c0, %mag_b : i32
    %out_bits = arith.ori %sign, %mag : i32
    %value = arith.bitcast %out_bits : i32 to f32
    %val_nan = arith.cmpf uno, %y_val, %y_val : f32
    %s_nan = arith.cmpi eq, %e, %c255 : i32
    %any_nan = arith.ori %val_nan, %s_nan : i1
    %r = arith.select %any_nan, %nan_f, %value : f32
    linalg.yield %r : f32
  } -> tensor<${M}x${Kb}x${bk}xf32>
  %out = tensor.collapse_shape %out3 [[0], [1, 2]]
      : tensor<${M}x${Kb}x${bk}xf32> into tensor<${M}x${K}xf32>
  return %out : tensor<${M}x${K}xf32>
}
