  // snippet: reads %a:tensor<${a_shape}xi8> %${p}S:tensor<1x${KB}xi8>; defines %${p}values:tensor<${XK}x${x_elem}> %${p}scales:tensor<${KB}xf32>; holes decode_fp4 to_x decode_scale
  // nvfp4's or mxfp4's A: its E2M1 codes' values in ${x_elem} (exact; to_x), its even elements
  // (each byte's low nibble) then its odd ones; its block scales (E4M3 or E8M0, unswizzled:
  // %${p}S) decoded to f32 (exact) times ${scale_factor} (a power of two: the factor x's
  // integers leave in the sums)
  %${p}codes = tensor.collapse_shape %a [[${a_dims}]] : tensor<${a_shape}xi8> into tensor<${K}xi8>
  %${p}split = tensor.empty() : tensor<2x${K}x${x_elem}>
  %${p}even_odd = linalg.generic {
      indexing_maps = [affine_map<(h, j) -> (j)>, affine_map<(h, j) -> (h, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%${p}codes : tensor<${K}xi8>) outs(%${p}split : tensor<2x${K}x${x_elem}>) {
  ^bb0(%${p}byte: i8, %${p}out: ${x_elem}):
    %${p}which = linalg.index 0 : index
    %${p}which32 = arith.index_cast %${p}which : index to i32
    %${p}c4 = arith.constant 4 : i32
    %${p}c15 = arith.constant 15 : i32
    %${p}shift = arith.muli %${p}which32, %${p}c4 : i32
    %${p}b32 = arith.extui %${p}byte : i8 to i32
    %${p}sh = arith.shrui %${p}b32, %${p}shift : i32
    %${p}nib = arith.andi %${p}sh, %${p}c15 : i32
${decode_fp4}
${to_x}
    linalg.yield %${p}narrow : ${x_elem}
  } -> tensor<2x${K}x${x_elem}>
  %${p}values = tensor.collapse_shape %${p}even_odd [[0, 1]] : tensor<2x${K}x${x_elem}> into tensor<${XK}x${x_elem}>
  %${p}scale_codes = tensor.collapse_shape %${p}S [[0, 1]] : tensor<1x${KB}xi8> into tensor<${KB}xi8>
  %${p}scale_empty = tensor.empty() : tensor<${KB}xf32>
  %${p}scales = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%${p}scale_codes : tensor<${KB}xi8>) outs(%${p}scale_empty : tensor<${KB}xf32>) {
  ^bb0(%${p}s_code: i8, %${p}o: f32):
${decode_scale}
    %${p}s_factor = arith.constant ${scale_factor} : f32
    %${p}s_x = arith.mulf ${s_val}, %${p}s_factor : f32
    linalg.yield %${p}s_x : f32
  } -> tensor<${KB}xf32>
