  // %${p}bits [${M}, ${Kb}]: max |x| bits per 1x${bk} block, the blocks as the last dim of a
  // [${M}, ${Kb}, ${bk}] view; NaN ignored; on bit patterns so subnormals count under FTZ.
  %${p}zero = arith.constant 0 : i32
  %${p}blocks = tensor.expand_shape %x [[0], [1, 2]] output_shape [${M}, ${Kb}, ${bk}]
      : tensor<${M}x${K}xf32> into tensor<${M}x${Kb}x${bk}xf32>
  %${p}empty = tensor.empty() : tensor<${M}x${Kb}xi32>
  %${p}init = linalg.fill ins(%${p}zero : i32) outs(%${p}empty : tensor<${M}x${Kb}xi32>)
      -> tensor<${M}x${Kb}xi32>
  %${p}bits = linalg.generic {
      indexing_maps = [affine_map<(i, k, l) -> (i, k, l)>, affine_map<(i, k, l) -> (i, k)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%${p}blocks : tensor<${M}x${Kb}x${bk}xf32>) outs(%${p}init : tensor<${M}x${Kb}xi32>) {
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
