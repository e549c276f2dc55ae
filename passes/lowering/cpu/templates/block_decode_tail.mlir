  // snippet: reads ${codes}:tensor<${shape}xi8> ${scales}:${scale_type}; defines %${p}f32:tensor<${shape}x${gemm}>
  // the last ${t} elements of each row of the operand, a partial block: decoded to ${gemm} with the
  // row's last block scale (${scale_doc})
  %${p}empty = tensor.empty(${sizes}) : tensor<${shape}x${gemm}>
  %${p}f32 = linalg.generic {
      indexing_maps = [affine_map<(r, j) -> (r, j)>, affine_map<(r, j) -> (${scale_index})>,
                       affine_map<(r, j) -> (r, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(${codes}, ${scales} : tensor<${shape}xi8>, ${scale_type})
      outs(%${p}empty : tensor<${shape}x${gemm}>) {
  ^bb0(%${p}code: i8, %${p}s: ${scale_elem}, %${p}out: ${gemm}):
${dequant}${narrow}
    linalg.yield ${yield} : ${gemm}
  } -> tensor<${shape}x${gemm}>
