// amax per 1x${bk} block of x [${M}, ${K}] -> [${M}, ${Kb}] (K a multiple of ${bk}: no padding):
// the blocks as the last dim of a [${M}, ${Kb}, ${bk}] view; NaN ignored; reduced on bit patterns
// so f32 subnormals count under flush-to-zero.
func.func private @${name}(%x: tensor<${M}x${K}xf32>) -> tensor<${M}x${Kb}xf32>
    attributes {${attrs}} {
  %zero = arith.constant 0 : i32
  %blocks = tensor.expand_shape %x [[0], [1, 2]] output_shape [${M}, ${Kb}, ${bk}]
      : tensor<${M}x${K}xf32> into tensor<${M}x${Kb}x${bk}xf32>
  %empty = tensor.empty() : tensor<${M}x${Kb}xi32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<${M}x${Kb}xi32>) -> tensor<${M}x${Kb}xi32>
  %bits = linalg.generic {
      indexing_maps = [affine_map<(i, k, l) -> (i, k, l)>, affine_map<(i, k, l) -> (i, k)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%blocks : tensor<${M}x${Kb}x${bk}xf32>) outs(%init : tensor<${M}x${Kb}xi32>) {
  ^bb0(%v: f32, %acc: i32):
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %c0 = arith.constant 0 : i32
    %b = arith.bitcast %v : f32 to i32
    %abs = arith.andi %b, %abs_mask : i32
    %is_nan = arith.cmpi ugt, %abs, %inf_bits : i32
    %val = arith.select %is_nan, %c0, %abs : i32
    %m = arith.maxui %acc, %val : i32
    linalg.yield %m : i32
  } -> tensor<${M}x${Kb}xi32>
  %empty_f = tensor.empty() : tensor<${M}x${Kb}xf32>
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
