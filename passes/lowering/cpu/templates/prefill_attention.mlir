// Attention of T query positions each (a generator's prefill; the executable @${exe},
// prefill_attention_executable.mlir) over S keys: q [${q_shape}] (batch, ${q_heads_doc}, head
// dim), K and V [${k_shape}] f32 (a bf16 cache as the decomposition widened it; K transposed,
// padded with zeros to a multiple of ${L} keys, the kernel's tile), the mask [${mask_shape}]
// ${mask_elem} (${mask_doc}) made the kernel's additive one, [batch, T, keys] f32 (-inf at the
// padding). Sizes ? are dynamic.
func.func private @${name}(%q: tensor<${q_shape}xf32>,
                            %k: tensor<${k_shape}xf32>,
                            %v: tensor<${k_shape}xf32>${mask_arg})
    -> tensor<${q_shape}xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %q_len = tensor.dim %q, %c2 : tensor<${q_shape}xf32>
  %c_per_t = arith.constant ${QG} : index
  %t = arith.divui %q_len, %c_per_t : index
  %batch = tensor.dim %k, %c0 : tensor<${k_shape}xf32>
  %s = tensor.dim %k, %c2 : tensor<${k_shape}xf32>
  %cL = arith.constant ${L} : index
  %cL_less = arith.constant ${L_less} : index
  %s_up = arith.addi %s, %cL_less : index
  %tiles = arith.divui %s_up, %cL : index
  %keys = arith.muli %tiles, %cL : index
  %pad = arith.subi %keys, %s : index
  %c_blocks_less = arith.constant ${R_less} : index
  %cR = arith.constant ${R} : index
  %t_up = arith.addi %t, %c_blocks_less : index
  %blocks = arith.divui %t_up, %cR : index
  %cH = arith.constant ${H} : index
  %cKVH = arith.constant ${KVH} : index
  %heads = arith.muli %batch, %cH : index
  %kv_heads = arith.muli %batch, %cKVH : index
  %n = arith.muli %heads, %blocks : index
  %rows = arith.muli %heads, %t : index
  %q_collapsed = tensor.collapse_shape %q [[0, 1, 2], [3]] : tensor<${q_shape}xf32> into tensor<${q_rows}x${E}xf32>
  %q_rows = tensor.cast %q_collapsed : tensor<${q_rows}x${E}xf32> to tensor<?x${E}xf32>
  %k_rows = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<${k_shape}xf32> into tensor<${kv_rows}x${S}x${E}xf32>
  %v_rows = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<${k_shape}xf32> into tensor<${kv_rows}x${S}x${E}xf32>
  %kv_zero = arith.constant 0.0 : f32
  %k_pad = tensor.pad %k_rows low[0, 0, 0] high[0, %pad, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index):
    tensor.yield %kv_zero : f32
  } : tensor<${kv_rows}x${S}x${E}xf32> to tensor<${kv_rows}x?x${E}xf32>
  %v_pad = tensor.pad %v_rows low[0, 0, 0] high[0, %pad, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index):
    tensor.yield %kv_zero : f32
  } : tensor<${kv_rows}x${S}x${E}xf32> to tensor<${kv_rows}x?x${E}xf32>
  %kt_empty = tensor.empty(${kv_sizes}) : tensor<${kt_empty_type}>
${kt_make}
${q_make}
${mask_rows}
  %add_empty = tensor.empty(${mask_sizes}) : tensor<${B}x?x${S}xf32>
  %additive = linalg.generic {
      indexing_maps = [affine_map<(b, t, s) -> (${mask_b}, ${mask_t}, s)>,
                       affine_map<(b, t, s) -> (b, t, s)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask_rows : tensor<${MB}x${MT}x${S}x${mask_elem}>) outs(%add_empty : tensor<${B}x?x${S}xf32>) {
  ^bb0(%m: ${mask_elem}, %o: f32):
    %neg_inf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
${mask_value}
    linalg.yield %a : f32
  } -> tensor<${B}x?x${S}xf32>
  %mask_pad = tensor.pad %additive low[0, 0, 0] high[0, 0, %pad] {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %closed = arith.constant 0xFF800000 : f32
    tensor.yield %closed : f32
  } : tensor<${B}x?x${S}xf32> to tensor<${B}x?x?xf32>
  %cKP = arith.constant ${KP} : index
  %kt_len = arith.muli %keys, %cKP : index
  %kt_any = tensor.cast %kt : tensor<${kv_rows}x${KE}x?x${q_elem}> to tensor<?x${KE}x?x${q_elem}>
  %v_any = tensor.cast %v_pad : tensor<${kv_rows}x?x${E}xf32> to tensor<?x?x${E}xf32>
  %mask_any = tensor.cast %mask_pad : tensor<${B}x?x?xf32> to tensor<?x?x?xf32>
  %out = flow.dispatch @${exe}::@${fn}[%n](%q_any, %kt_any, %v_any, %mask_any, %t, %batch, %keys)
      : (tensor<?x${E}x${q_elem}>{%rows}, tensor<?x${KE}x?x${q_elem}>{%kv_heads, %kt_len},
         tensor<?x?x${E}xf32>{%kv_heads, %keys}, tensor<?x?x?xf32>{%batch, %t, %keys},
         index, index, index)
      -> tensor<?x${E}xf32>{%rows}
  %out_rows = tensor.cast %out : tensor<?x${E}xf32> to tensor<${q_rows}x${E}xf32>
  %result = tensor.expand_shape %out_rows [[0, 1, 2], [3]] output_shape [${q_sizes}]
      : tensor<${q_rows}x${E}xf32> into tensor<${q_shape}xf32>
  return %result : tensor<${q_shape}xf32>
}
