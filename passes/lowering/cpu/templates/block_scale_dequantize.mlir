// block_scale_dequantize (cuDNN: vals * scale, the scale broadcast over its ${bm}x${bk} block):
// decode(y) (${out_format}) * decode(scale) (${scale_format}), the product exact in f64 and
// rounded to f32 as IEEE does (subnormal results included).
func.func private @${name}(%y: tensor<${M}x${K}xi8>, %scale: tensor<${Mb}x${Kb}xi8>)
    -> tensor<${M}x${K}xf32> attributes {${attrs}} {
  %empty = tensor.empty() : tensor<${M}x${K}xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (m, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<${M}x${K}xi8>) outs(%empty : tensor<${M}x${K}xf32>) {
  ^bb0(%y_code: i8, %o: f32):
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %bm_i = arith.constant ${bm} : index
    %bk_i = arith.constant ${bk} : index
    %row_b = arith.divui %row, %bm_i : index
    %col_b = arith.divui %col, %bk_i : index
    %sc_code = tensor.extract %scale[%row_b, %col_b] : tensor<${Mb}x${Kb}xi8>
${decode_scale}
${decode_y}
    %y64 = arith.extf %y_val : f32 to f64
    %p64 = arith.mulf %y64, %scale64 : f64
    %p_abs = math.absf %p64 : f64
${p_f32}
    // the sign of the exact product (-0.0 included), from its f64 bits
    %p64_bits = arith.bitcast %p64 : f64 to i64
    %c63 = arith.constant 63 : i64
    %p_sign64 = arith.shrui %p64_bits, %c63 : i64
    %p_sign1 = arith.trunci %p_sign64 : i64 to i32
    %c31_s = arith.constant 31 : i32
    %p_sign = arith.shli %p_sign1, %c31_s : i32
    %p_mag_bits = arith.bitcast %p_f32 : f32 to i32
    %p_bits = arith.ori %p_mag_bits, %p_sign : i32
    %p_signed = arith.bitcast %p_bits : i32 to f32
    %p_is_nan = arith.cmpf uno, %p64, %p64 : f64
    %nan_f = arith.constant 0x7FC00000 : f32
    %r = arith.select %p_is_nan, %nan_f, %p_signed : f32
    linalg.yield %r : f32
  } -> tensor<${M}x${K}xf32>
  return %out : tensor<${M}x${K}xf32>
}
