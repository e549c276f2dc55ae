// amax: max |x| over the whole tensor; NaN elements are ignored (as TE's fmax reduction).
// Reduced on the bit patterns (for non-NaN floats, |x| orders like its bits): exact under the
// flush-to-zero mode IREE's CPU workers run in, so f32 subnormals still count. In two steps, the
// max of each row of the [${R}, ${C}] view, then of the row maxima: IREE runs a whole-tensor
// reduction as one workgroup (one core); the rows spread over every core.
func.func private @${name}(%x: tensor<${shape}xf32>) -> tensor<f32> attributes {${attrs}} {
  %zero = arith.constant 0 : i32
${collapse}
  %empty_rows = tensor.empty(${rows_size}) : tensor<${R}xi32>
  %init_rows = linalg.fill ins(%zero : i32) outs(%empty_rows : tensor<${R}xi32>) -> tensor<${R}xi32>
  %row_bits = linalg.generic {
      indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
      iterator_types = ["parallel", "reduction"]}
      ins(${rows} : tensor<${R}x${C}xf32>) outs(%init_rows : tensor<${R}xi32>) {
  ^bb0(%v: f32, %acc: i32):
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %c0 = arith.constant 0 : i32
    %bits = arith.bitcast %v : f32 to i32
    %abs = arith.andi %bits, %abs_mask : i32
    %is_nan = arith.cmpi ugt, %abs, %inf_bits : i32
    %val = arith.select %is_nan, %c0, %abs : i32
    %m = arith.maxui %acc, %val : i32
    linalg.yield %m : i32
  } -> tensor<${R}xi32>
  %empty = tensor.empty() : tensor<i32>
  %init = linalg.fill ins(%zero : i32) outs(%empty : tensor<i32>) -> tensor<i32>
  %amax_bits = linalg.generic {
      indexing_maps = [affine_map<(r) -> (r)>, affine_map<(r) -> ()>],
      iterator_types = ["reduction"]}
      ins(%row_bits : tensor<${R}xi32>) outs(%init : tensor<i32>) {
  ^bb0(%b: i32, %acc: i32):
    %m = arith.maxui %acc, %b : i32
    linalg.yield %m : i32
  } -> tensor<i32>
  %empty_f = tensor.empty() : tensor<f32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%amax_bits : tensor<i32>) outs(%empty_f : tensor<f32>) {
  ^bb0(%b: i32, %o: f32):
    %f = arith.bitcast %b : i32 to f32
    linalg.yield %f : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}
