  // snippet: reads ${codes}:tensor<${shape}xi8> ${scales}:${scale_type}; defines %${p}f32:tensor<${shape}x${gemm}>; holes head tail
  // K = ${Kw} whole blocks of ${bk} and a partial one of ${t}: the whole blocks decode as
  // [rows, blocks, ${bk}] (block_decode_view.mlir), the rest with each row's last scale
  %${p}head_codes = tensor.extract_slice ${codes}[0, 0] [${rows_size}, ${K_head}] [1, 1]
      : tensor<${shape}xi8> to tensor<${head_shape}xi8>
  %${p}head_scales = tensor.extract_slice ${scales}[0, 0] [${head_scale_sizes}] [1, 1]
      : ${scale_type} to ${head_scale_type}
  %${p}tail_codes = tensor.extract_slice ${codes}[0, ${K_head}] [${rows_size}, ${t}] [1, 1]
      : tensor<${shape}xi8> to tensor<${tail_shape}xi8>
  %${p}tail_scales = tensor.extract_slice ${scales}[${tail_scale_offsets}] [${tail_scale_sizes}] [1, 1]
      : ${scale_type} to ${tail_scale_type}
${head}
${tail}
  %${p}f32 = tensor.concat dim(1) %${p}h_f32, %${p}t_f32
      : (tensor<${head_shape}x${gemm}>, tensor<${tail_shape}x${gemm}>) -> tensor<${shape}x${gemm}>
