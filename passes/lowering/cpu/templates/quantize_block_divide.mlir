// block_scale_quantize data (cuDNN: output = round_to_even(vals / scale)), blocks of
// ${bm}x${bk}, ${scale_format} scales: the quotient is taken in f64 from exact operands and
// rounded to f32 as IEEE does (subnormals included), then cast to ${out_format} (saturating,
// ties to even); a zero scale divides by 1; codes are one per element (E2M1 unpacked).
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xi8>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>) attributes {${attrs}} {
  %empty = tensor.empty() : tensor<${M}x${K}xi8>
  %data = linalg.generic {
      indexing_maps = [affine_map<(m, k) -> (m, k)>, affine_map<(m, k) -> (m, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<${M}x${K}xf32>) outs(%empty : tensor<${M}x${K}xi8>) {
  ^bb0(%xv: f32, %out: i8):
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %bm_i = arith.constant ${bm} : index
    %bk_i = arith.constant ${bk} : index
    %row_b = arith.divui %row, %bm_i : index
    %col_b = arith.divui %col, %bk_i : index
    %sc_code = tensor.extract %scale[%row_b, %col_b] : tensor<${Mb}x${Kb}xi8>
${decode_scale}
    %zero64 = arith.constant 0.0 : f64
    %one64 = arith.constant 1.0 : f64
    %scale_zero = arith.cmpf oeq, %scale64, %zero64 : f64
    %divisor = arith.select %scale_zero, %one64, %scale64 : f64
${x_f64}
    %q64 = arith.divf %xd_f64, %divisor : f64
    %q_abs = math.absf %q64 : f64
${q_f32}
    %sign_mask = arith.constant -2147483648 : i32
    %x_bits_q = arith.bitcast %xv : f32 to i32
    %x_sign = arith.andi %x_bits_q, %sign_mask : i32
    %q_mag_bits = arith.bitcast %q_f32 : f32 to i32
    %q_bits = arith.ori %q_mag_bits, %x_sign : i32
    %q_signed = arith.bitcast %q_bits : i32 to f32
    %q_is_nan = arith.cmpf uno, %q64, %q64 : f64
    %nan_f = arith.constant 0x7FC00000 : f32
    %qv = arith.select %q_is_nan, %nan_f, %q_signed : f32
    %one = arith.constant 1.0 : f32
${encode}
    linalg.yield %byte : i8
  } -> tensor<${M}x${K}xi8>
  return %data, %scale : tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>
}
