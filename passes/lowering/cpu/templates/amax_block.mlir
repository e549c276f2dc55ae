// amax per block: max |x| over each ${bm}x${bk} block of x [${M}, ${K}] -> [${Mb}, ${Kb}].
// Partial blocks are padded with zeros (which never raise |x|); NaN ${nan_doc}; reduced on bit
// patterns so f32 subnormals count under flush-to-zero.
func.func private @${name}(%x: tensor<${M}x${K}xf32>) -> tensor<${Mb}x${Kb}xf32>
    attributes {${attrs}} {${m_defs}
  %zero_f = arith.constant 0.0 : f32
  %zero = arith.constant 0 : i32
  %padded = tensor.pad %x low[0, 0] high[${pad_m}, ${pad_k}] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero_f : f32
  } : tensor<${M}x${K}xf32> to tensor<${Mp}x${Kp}xf32>
  %blocks = tensor.expand_shape %padded [[0, 1], [2, 3]] output_shape [${Mb_size}, ${bm}, ${Kb}, ${bk}]
      : tensor<${Mp}x${Kp}xf32> into tensor<${Mb}x${bm}x${Kb}x${bk}xf32>
  %empty = tensor.empty(${m}) : tensor<${Mb}x${Kb}xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<${Mb}x${Kb}xi32>) -> tensor<${Mb}x${Kb}xi32>
  %bits = linalg.generic {
      indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>, affine_map<(i, j, k, l) -> (i, k)>],
      iterator_types = ["parallel", "reduction", "parallel", "reduction"]}
      ins(%blocks : tensor<${Mb}x${bm}x${Kb}x${bk}xf32>) outs(%init : tensor<${Mb}x${Kb}xi32>) {
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
  } -> tensor<${Mb}x${Kb}xi32>
  %empty_f = tensor.empty(${m}) : tensor<${Mb}x${Kb}xf32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%bits : tensor<${Mb}x${Kb}xi32>) outs(%empty_f : tensor<${Mb}x${Kb}xf32>) {
  ^bb0(%b: i32, %o: f32):
    %f = arith.bitcast %b : i32 to f32
    linalg.yield %f : f32
  } -> tensor<${Mb}x${Kb}xf32>
  return %amax : tensor<${Mb}x${Kb}xf32>
}
