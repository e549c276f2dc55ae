// quantize (E8M0-scaled blocks of ${bm}x${bk}): data = cast(x * 2^(127 - e)) per block (a
// multiplier of 1 for e = 0, as TE has it), the
// multiply exact on bits (ldexp_f32.mlir) and the cast the FP8 encoder of encode_fp8.mlir; a block
// whose scale is NaN (0xFF) encodes as NaN codes. The scale codes pass through unchanged.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xi8>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>) attributes {${attrs}} {
  %empty = tensor.empty() : tensor<${M}x${K}xi8>
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
    %scale_e = arith.extui %ec : i8 to i32
    %e_c127 = arith.constant 127 : i32
    %c255_e = arith.constant 255 : i32
    %shift_e = arith.subi %e_c127, %scale_e : i32
    %e_zero = arith.constant 0 : i32
    %scale_is_zero = arith.cmpi eq, %scale_e, %e_zero : i32
    %shift = arith.select %scale_is_zero, %e_zero, %shift_e : i32
${ldexp}
    %one = arith.constant 1.0 : f32
${encode}
    %scale_is_nan = arith.cmpi eq, %scale_e, %c255_e : i32
    %nan_byte = arith.constant ${nan_code} : i8
    %result = arith.select %scale_is_nan, %nan_byte, %byte : i8
    linalg.yield %result : i8
  } -> tensor<${M}x${K}xi8>
  return %data, %scale : tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>
}
