// amax: max |x| over the whole tensor; NaN elements are ignored (arith.maxnumf), as TE's fmax.
func.func private @${name}(%x: tensor<${shape}xf32>) -> tensor<f32> attributes {${attrs}} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {
      indexing_maps = [affine_map<(${dims}) -> (${dims})>, affine_map<(${dims}) -> ()>],
      iterator_types = [${reductions}]}
      ins(%x : tensor<${shape}xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %m = arith.maxnumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %amax : tensor<f32>
}
