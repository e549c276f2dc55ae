// quantize (E8M0-scaled blocks of ${bm}x${bk}): data = cast(x * 2^(127 - e)) per block, with a
// multiplier of 1 for e = 0 as TE has it; the cast is the FP8 encoder of encode_fp8.mlir, whose
// multiply is exact here (see below). A block whose scale is NaN (0xFF) encodes as NaN codes.
// The scale codes pass through unchanged.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xi8>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>) attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${M}x${K}xi8>
  %data = linalg.generic {
      indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (m, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<${M}x${K}xf32>) outs(%empty : tensor<${M}x${K}xi8>) {
  ^bb0(%in: f32, %out: i8):
    // the block's scale (read by index: IREE cannot tile floordiv indexing maps)
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %bm_i = arith.constant ${bm} : index
    %bk_i = arith.constant ${bk} : index
    %row_b = arith.divui %row, %bm_i : index
    %col_b = arith.divui %col, %bk_i : index
    %ec = tensor.extract %scale[%row_b, %col_b] : tensor<${Mb}x${Kb}xi8>
    // the multiplier 2^(127 - e) is a normal f32 for 1 <= e <= 253 (the encoder's multiply is then
    // exact: see encode_fp8.mlir), 1 for e = 0; e = 254 (only an inf amax) would need the
    // subnormal 2^-127, which flush-to-zero reads as 0: (x * 0.5) * 2^-126 instead (exact, and
    // an x this halving pushes below the normal range encodes to zero either way)
    %scale_e = arith.extui %ec : i8 to i32
    %e_c127 = arith.constant 127 : i32
    %c254_e = arith.constant 254 : i32
    %c255_e = arith.constant 255 : i32
    %c23_e = arith.constant 23 : i32
    %e_zero = arith.constant 0 : i32
    %scale_is_zero = arith.cmpi eq, %scale_e, %e_zero : i32
    %is_fe = arith.cmpi eq, %scale_e, %c254_e : i32
    %mult_exp = arith.subi %c254_e, %scale_e : i32
    %mult_exp_fe = arith.constant 1 : i32
    %mult_exp_sel = arith.select %is_fe, %mult_exp_fe, %mult_exp : i32
    %mult_bits = arith.shli %mult_exp_sel, %c23_e : i32
    %mult_raw = arith.bitcast %mult_bits : i32 to f32
    %one_m = arith.constant 1.0 : f32
    %mult = arith.select %scale_is_zero, %one_m, %mult_raw : f32
    %half = arith.constant 0.5 : f32
    %in_half = arith.mulf %in, %half : f32
    %x_in = arith.select %is_fe, %in_half, %in : f32
${encode}
    %scale_is_nan = arith.cmpi eq, %scale_e, %c255_e : i32
    %nan_byte = arith.constant ${nan_code} : i8
    %result = arith.select %scale_is_nan, %nan_byte, %byte : i8
    linalg.yield %result : i8
  } -> tensor<${M}x${K}xi8>
  return %data, %scale : tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>
}
