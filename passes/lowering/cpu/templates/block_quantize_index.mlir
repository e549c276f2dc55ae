  // snippet: reads %x:tensor<${M}x${K}xf32> %scale:tensor<${Mb}x${Kb}x${scale_elem}>; defines %empty:tensor<${M}x${K}xi8> %data:tensor<${M}x${K}xi8>; locals %xv %out %row %col %bm_i %bk_i %row_b %col_b %s; holes element
  // each element cast with its block's scale, read by index (any shape; IREE cannot tile a
  // floordiv indexing map, so it is a gather per element: block_quantize_view.mlir is the fast
  // form where K is whole blocks of one row)
  %empty = tensor.empty(${m}) : tensor<${M}x${K}xi8>
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
    %s = tensor.extract %scale[%row_b, %col_b] : tensor<${Mb}x${Kb}x${scale_elem}>
${element}
    linalg.yield ${result} : i8
  } -> tensor<${M}x${K}xi8>
