  // snippet: reads %x:tensor<${M}x${K}xf32>; defines %${p}bits:tensor<${M}x${Kb}xi32> %${p}zero:i32; locals %v %acc %abs_mask %inf_bits %c0 %b %abs %is_nan %val %m
  // %${p}bits [${M}, ${Kb}]: max |x| bits per 1x${bk} block; NaN ${nan_doc}; on bit patterns so
  // subnormals count under FTZ. Reduced as a [${M}*${Kb}, ${bk}] view (one row per block), the
  // iteration space IREE keeps, so the op's own tiling holds (lowering/cpu/tiling.py).
  %${p}zero = arith.constant 0 : i32
  %${p}flat = tensor.collapse_shape %x [[0, 1]] : tensor<${M}x${K}xf32> into tensor<${N}xf32>
  %${p}blocks = tensor.expand_shape %${p}flat [[0, 1]] output_shape [${R_size}, ${bk}]
      : tensor<${N}xf32> into tensor<${R}x${bk}xf32>
  %${p}empty = tensor.empty(${r_empty}) : tensor<${R}xi32>
  %${p}init = linalg.fill ins(%${p}zero : i32) outs(%${p}empty : tensor<${R}xi32>)
      -> tensor<${R}xi32>
  %${p}flat_bits = linalg.generic {
      indexing_maps = [affine_map<(b, l) -> (b, l)>, affine_map<(b, l) -> (b)>],
      iterator_types = ["parallel", "reduction"]${tiling}}
      ins(%${p}blocks : tensor<${R}x${bk}xf32>) outs(%${p}init : tensor<${R}xi32>) {
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
  } -> tensor<${R}xi32>
  %${p}bits = tensor.expand_shape %${p}flat_bits [[0, 1]] output_shape [${M_size}, ${Kb}]
      : tensor<${R}xi32> into tensor<${M}x${Kb}xi32>
