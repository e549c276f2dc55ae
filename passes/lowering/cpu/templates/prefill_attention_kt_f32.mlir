// snippet: reads %k_pad:tensor<${kv_rows}x?x${E}xf32> %kt_empty:tensor<${kv_rows}x${E}x?xf32>; defines %kt:tensor<${kv_rows}x${E}x?xf32>
  // K transposed: [K/V heads, head dim, keys] f32
  %kt = linalg.transpose ins(%k_pad : tensor<${kv_rows}x?x${E}xf32>)
      outs(%kt_empty : tensor<${kv_rows}x${E}x?xf32>) permutation = [0, 2, 1]
