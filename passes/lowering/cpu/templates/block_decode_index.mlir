  // snippet: reads ${codes}:tensor<${shape}xi8> ${scales}:${scale_type}; defines %${p}f32:tensor<${shape}x${gemm}>; holes scale
  // operand ${p} decoded to the GEMM's ${gemm}, each element with its block's scale (${scale_doc}:
  // ${scales}, a ${scale_type}, read in the body)
  %${p}empty = tensor.empty(${sizes}) : tensor<${shape}x${gemm}>
  %${p}f32 = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]}
      ins(${codes} : tensor<${shape}xi8>) outs(%${p}empty : tensor<${shape}x${gemm}>) {
  ^bb0(%${p}code: i8, %${p}out: ${gemm}):
${scale}
${dequant}${narrow}
    linalg.yield ${yield} : ${gemm}
  } -> tensor<${shape}x${gemm}>
