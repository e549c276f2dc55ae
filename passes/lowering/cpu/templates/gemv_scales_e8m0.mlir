  // snippet: reads %sa:${sa_type} %sb:${sb_type}; defines %x_codes:tensor<${KB}xi8> %x_empty:tensor<${KB}xf32> %x_scales:tensor<${KB}xf32> %w_scales:tensor<${RB}x${WKB}xi8>; locals %x_code %x_o; holes unswizzle_a unswizzle_b decode_x
  // E8M0 scales (mx layout, %sa: ${sa_type}, %sb: ${sb_type}): both unswizzled to [rows,
  // K blocks]; x's decoded to f32, 2^(e - 127) (255: NaN; 0, 2^-127, is no f32 normal: 0 under
  // IREE's flush-to-zero), the rows' kept as codes (the same size: hoisted for constant weights;
  // decoded once a row before its loop, gemv_row_factors_e8m0.mlir)
${unswizzle_a}
${unswizzle_b}
  %x_codes = tensor.collapse_shape %a_S [[0, 1]] : tensor<1x${KB}xi8> into tensor<${KB}xi8>
  %x_empty = tensor.empty() : tensor<${KB}xf32>
  %x_scales = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%x_codes : tensor<${KB}xi8>) outs(%x_empty : tensor<${KB}xf32>) {
  ^bb0(%x_code: i8, %x_o: f32):
${decode_x}
    linalg.yield %x_f32 : f32
  } -> tensor<${KB}xf32>
  %w_scales = tensor.cast %b_S : tensor<${RB}x${WKB}xi8> to tensor<${RB}x${WKB}xi8>
