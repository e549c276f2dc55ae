  // snippet: reads ${codes}:tensor<${shape}xi8> ${scales}:${scale_type}; defines %${p}f32:tensor<${shape}x${gemm}>
  // operand ${p} decoded to the GEMM's ${gemm}, each element with its block's scale (${scale_doc}):
  // read as [rows, K / ${bk}, ${bk}], the block scale is an affine read of each element (a
  // broadcast; block_scale_index.mlir's gather per element ran 3-4x slower). The compute
  // barriers keep IREE from folding the codes' reshape and the scales' producer (a swizzle: a
  // gather) into this op, which turns the broadcast back into a gather per element.
  %${p}blocks_raw = tensor.expand_shape ${codes} [[0], [1, 2]] output_shape [${rows_size}, ${Kb}, ${bk}]
      : tensor<${shape}xi8> into tensor<${view}xi8>
  %${p}blocks = iree_tensor_ext.compute_barrier.start %${p}blocks_raw : tensor<${view}xi8>${view_sizes} -> tensor<${view}xi8>
  %${p}scales = iree_tensor_ext.compute_barrier.start ${scales} : ${scale_type}${scale_sizes} -> ${scale_type}
  %${p}empty = tensor.empty(${sizes}) : tensor<${view}x${gemm}>
  %${p}view = linalg.generic {
      indexing_maps = [affine_map<(r, b, j) -> (r, b, j)>, affine_map<(r, b, j) -> (${scale_index})>,
                       affine_map<(r, b, j) -> (r, b, j)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%${p}blocks, %${p}scales : tensor<${view}xi8>, ${scale_type})
      outs(%${p}empty : tensor<${view}x${gemm}>) {
  ^bb0(%${p}code: i8, %${p}s: ${scale_elem}, %${p}out: ${gemm}):
${dequant}${narrow}
    linalg.yield ${yield} : ${gemm}
  } -> tensor<${view}x${gemm}>
  %${p}f32 = tensor.collapse_shape %${p}view [[0], [1, 2]]
      : tensor<${view}x${gemm}> into tensor<${shape}x${gemm}>
