  // snippet: reads %b:tensor<${N}x${K}xbf16>; defines %b_panels:tensor<${S}x${KH}x32xbf16>; locals %b_rows %b_lines_empty %b_lines
  // b laid out as the GEMM's panels, [${N} / 16, ${K} / 2, 16 x 2]: 16 rows' pairs of K a line
  // (the transpose the GEMM would otherwise make of each 16 rows into a panel on its stack, in
  // every workgroup of every call); b a constant (a weight's decoded values), so IREE computes
  // this once, when the module loads.
  %b_rows = tensor.expand_shape %b [[0, 1], [2, 3]] output_shape [${S}, 16, ${KH}, 2]
      : tensor<${N}x${K}xbf16> into tensor<${S}x16x${KH}x2xbf16>
  %b_lines_empty = tensor.empty() : tensor<${S}x${KH}x16x2xbf16>
  %b_lines = linalg.transpose ins(%b_rows : tensor<${S}x16x${KH}x2xbf16>)
      outs(%b_lines_empty : tensor<${S}x${KH}x16x2xbf16>) permutation = [0, 2, 1, 3]
  %b_panels = tensor.collapse_shape %b_lines [[0], [1], [2, 3]]
      : tensor<${S}x${KH}x16x2xbf16> into tensor<${S}x${KH}x32xbf16>
