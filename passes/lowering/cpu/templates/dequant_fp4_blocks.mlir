  // snippet: reads ${data}:${data_type} %${p}S:tensor<${rows}x${kb}xi8>; defines %${p}f32:tensor<${rows}x${Kp}x${gemm}>; holes element
  // operand ${p} decoded: its packed E2M1 codes ${data} ([${rows}, ${Kp} / 2] bytes) read as i4
  // ([${rows}, ${kb}, ${block}]: IREE's i4 tensors are packed two per byte, the even element in
  // the low nibble, the bytes' own order), each block's scale code %${p}S a broadcast over its
  // ${block} codes; the element hole gives one code's value (from %${p}nib and %${p}s_code).
  // Every map is a projection, no code or scale gathered per element: IREE vectorizes it (the
  // gather form ran 2.3x slower with dynamic rows, benchmarks/RESULTS.md).
  %${p}codes = iree_tensor_ext.bitcast ${data} : ${data_type}${braces} -> tensor<${rows}x${Kp}xi4>${braces}
  %${p}blocks = tensor.expand_shape %${p}codes [[0], [1, 2]] output_shape [${rows_size}, ${kb}, ${block}]
      : tensor<${rows}x${Kp}xi4> into tensor<${rows}x${kb}x${block}xi4>
  %${p}empty = tensor.empty(${empty}) : tensor<${rows}x${kb}x${block}x${gemm}>
  %${p}deq_blocks = linalg.generic {
      indexing_maps = [affine_map<(r, b, t) -> (r, b, t)>, affine_map<(r, b, t) -> (r, b)>,
                       affine_map<(r, b, t) -> (r, b, t)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%${p}blocks, %${p}S : tensor<${rows}x${kb}x${block}xi4>, tensor<${rows}x${kb}xi8>)
      outs(%${p}empty : tensor<${rows}x${kb}x${block}x${gemm}>) {
  ^bb0(%${p}code: i4, %${p}s_code: i8, %${p}out: ${gemm}):
    %${p}nib = arith.extui %${p}code : i4 to i32
${element}
    linalg.yield ${yielded} : ${gemm}
  } -> tensor<${rows}x${kb}x${block}x${gemm}>
  %${p}f32 = tensor.collapse_shape %${p}deq_blocks [[0], [1, 2]]
      : tensor<${rows}x${kb}x${block}x${gemm}> into tensor<${rows}x${Kp}x${gemm}>
