// Attention of one query position over a KV cache read as stored (the executable @${exe},
// decode_attention_executable.mlir): q [${q_shape}] (batch, K/V heads, each K/V head's query
// heads, head dim), K and V [${B}, ${KVH}, ${S}, ${E}] ${kv_elem}, the mask [${mask_shape}]
// ${mask_elem} (${mask_doc}) made the kernel's additive one, [${B}, ${S}] f32.
func.func private @${name}(%q: tensor<${q_shape}xf32>,
                            %k: tensor<${B}x${KVH}x${S}x${E}x${kv_elem}>,
                            %v: tensor<${B}x${KVH}x${S}x${E}x${kv_elem}>${mask_arg})
    -> tensor<${q_shape}xf32> {
  %q_rows = tensor.collapse_shape %q [[0, 1, 2], [3]] : tensor<${q_shape}xf32> into tensor<${BH}x${E}xf32>
  %k_rows = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<${B}x${KVH}x${S}x${E}x${kv_elem}> into tensor<${BK}x${S}x${E}x${kv_elem}>
  %v_rows = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<${B}x${KVH}x${S}x${E}x${kv_elem}> into tensor<${BK}x${S}x${E}x${kv_elem}>
${mask_rows}
  %add_empty = tensor.empty() : tensor<${B}x${S}xf32>
  %additive = linalg.generic {
      indexing_maps = [affine_map<(b, s) -> (${mask_b}, s)>, affine_map<(b, s) -> (b, s)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mask_rows : tensor<${MB}x${S}x${mask_elem}>) outs(%add_empty : tensor<${B}x${S}xf32>) {
  ^bb0(%m: ${mask_elem}, %o: f32):
    %neg_inf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
${mask_value}
    linalg.yield %a : f32
  } -> tensor<${B}x${S}xf32>
  %n = arith.constant ${BH} : index
  %scores, %out = flow.dispatch @${exe}::@${fn}[%n](%q_rows, %k_rows, %v_rows, %additive)
      : (tensor<${BH}x${E}xf32>, tensor<${BK}x${S}x${E}x${kv_elem}>,
         tensor<${BK}x${S}x${E}x${kv_elem}>, tensor<${B}x${S}xf32>)
      -> (tensor<${BH}x${S}xf32>, tensor<${BH}x${E}xf32>)
  %result = tensor.expand_shape %out [[0, 1, 2], [3]] output_shape [${q_sizes}]
      : tensor<${BH}x${E}xf32> into tensor<${q_shape}xf32>
  return %result : tensor<${q_shape}xf32>
}
