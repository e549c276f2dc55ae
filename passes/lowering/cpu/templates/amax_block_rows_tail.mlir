// amax per 1x${bk} block of x [${M}, ${K}] -> [${M}, ${Kb}], its last block partial (${tail} of
// ${bk} columns): the full blocks (columns [0, ${Kf})) and the tail reduced apart, from slices of
// x, so no padded copy of x is made (a pad of x to ${Kp} columns was one: strided copies of the
// whole activation). The same max over the same elements as the padded blocks (zeros never
// raise |x|); NaN ${nan_doc}; reduced on bit patterns so f32 subnormals count under
// flush-to-zero.
func.func private @${name}(%x: tensor<${M}x${K}xf32>) -> tensor<${M}x${Kb}xf32>
    attributes {${attrs}} {${m_defs}
  %zero = arith.constant 0 : i32
  %full_x = tensor.extract_slice %x[0, 0] [${M_size}, ${Kf}] [1, 1]
      : tensor<${M}x${K}xf32> to tensor<${M}x${Kf}xf32>
  %full_blocks = tensor.expand_shape %full_x [[0], [1, 2]] output_shape [${M_size}, ${Kbf}, ${bk}]
      : tensor<${M}x${Kf}xf32> into tensor<${M}x${Kbf}x${bk}xf32>
  %tail_cols = tensor.extract_slice %x[0, ${Kf}] [${M_size}, ${tail}] [1, 1]
      : tensor<${M}x${K}xf32> to tensor<${M}x${tail}xf32>
  %tail_x = tensor.expand_shape %tail_cols [[0], [1, 2]] output_shape [${M_size}, 1, ${tail}]
      : tensor<${M}x${tail}xf32> into tensor<${M}x1x${tail}xf32>
  %empty = tensor.empty(${m}) : tensor<${M}x${Kb}xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<${M}x${Kb}xi32>) -> tensor<${M}x${Kb}xi32>
  %full_init = tensor.extract_slice %init[0, 0] [${M_size}, ${Kbf}] [1, 1]
      : tensor<${M}x${Kb}xi32> to tensor<${M}x${Kbf}xi32>
  %tail_init = tensor.extract_slice %init[0, ${Kbf}] [${M_size}, 1] [1, 1]
      : tensor<${M}x${Kb}xi32> to tensor<${M}x1xi32>
  %full_bits = linalg.generic {
      indexing_maps = [affine_map<(i, k, l) -> (i, k, l)>, affine_map<(i, k, l) -> (i, k)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%full_blocks : tensor<${M}x${Kbf}x${bk}xf32>) outs(%full_init : tensor<${M}x${Kbf}xi32>) {
  ^bb0(%v: f32, %acc: i32):
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %c0 = arith.constant 0 : i32
    %b = arith.bitcast %v : f32 to i32
    %abs = arith.andi %b, %abs_mask : i32
    %is_nan = arith.cmpi ugt, %abs, %inf_bits : i32
    %val = arith.select %is_nan, ${nan_bits}, %abs : i32
    %m = arith.maxui %acc, %val : i32
    linalg.yield %m : i32
  } -> tensor<${M}x${Kbf}xi32>
  %tail_bits = linalg.generic {
      indexing_maps = [affine_map<(i, k, l) -> (i, k, l)>, affine_map<(i, k, l) -> (i, k)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%tail_x : tensor<${M}x1x${tail}xf32>) outs(%tail_init : tensor<${M}x1xi32>) {
  ^bb0(%v: f32, %acc: i32):
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %c0 = arith.constant 0 : i32
    %b = arith.bitcast %v : f32 to i32
    %abs = arith.andi %b, %abs_mask : i32
    %is_nan = arith.cmpi ugt, %abs, %inf_bits : i32
    %val = arith.select %is_nan, ${nan_bits}, %abs : i32
    %m = arith.maxui %acc, %val : i32
    linalg.yield %m : i32
  } -> tensor<${M}x1xi32>
  %with_full = tensor.insert_slice %full_bits into %init[0, 0] [${M_size}, ${Kbf}] [1, 1]
      : tensor<${M}x${Kbf}xi32> into tensor<${M}x${Kb}xi32>
  %bits = tensor.insert_slice %tail_bits into %with_full[0, ${Kbf}] [${M_size}, 1] [1, 1]
      : tensor<${M}x1xi32> into tensor<${M}x${Kb}xi32>
  %empty_f = tensor.empty(${m}) : tensor<${M}x${Kb}xf32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%bits : tensor<${M}x${Kb}xi32>) outs(%empty_f : tensor<${M}x${Kb}xf32>) {
  ^bb0(%b: i32, %o: f32):
    %f = arith.bitcast %b : i32 to f32
    linalg.yield %f : f32
  } -> tensor<${M}x${Kb}xf32>
  return %amax : tensor<${M}x${Kb}xf32>
}
