  // snippet: reads %x:tensor<${M}x${K}xf32> %scale:tensor<${M}x${Kb}x${scale_elem}>; defines %x_head:tensor<${M}x${K_head}xf32> %scale_head:tensor<${M}x${Kw}x${scale_elem}> %x_tail:tensor<${M}x${t}xf32> %scale_tail:tensor<${M}x1x${scale_elem}> %data:tensor<${M}x${K}xi8>; holes head tail
  // K = ${Kw} whole blocks of ${bk} and a partial one of ${t}: the whole blocks are cast as
  // [M, blocks, ${bk}] (block_quantize_view.mlir), the rest with each row's last scale
  %x_head = tensor.extract_slice %x[0, 0] [${M_size}, ${K_head}] [1, 1]
      : tensor<${M}x${K}xf32> to tensor<${M}x${K_head}xf32>
  %scale_head = tensor.extract_slice %scale[0, 0] [${M_size}, ${Kw}] [1, 1]
      : tensor<${M}x${Kb}x${scale_elem}> to tensor<${M}x${Kw}x${scale_elem}>
  %x_tail = tensor.extract_slice %x[0, ${K_head}] [${M_size}, ${t}] [1, 1]
      : tensor<${M}x${K}xf32> to tensor<${M}x${t}xf32>
  %scale_tail = tensor.extract_slice %scale[0, ${Kw}] [${M_size}, 1] [1, 1]
      : tensor<${M}x${Kb}x${scale_elem}> to tensor<${M}x1x${scale_elem}>
${head}
${tail}
  %data = tensor.concat dim(1) %h_data, %t_data
      : (tensor<${M}x${K_head}xi8>, tensor<${M}x${t}xi8>) -> tensor<${M}x${K}xi8>
