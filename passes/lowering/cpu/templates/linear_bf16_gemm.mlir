// A bf16 weight's linear of many rows (a prefill, a batch) as a GEMM that reads the weight as
// stored (the executable @${exe}, gemm_executable.mlir: 16 rows of w transposed into each panel):
// out = a . w^T, f32 sums of exact products, each output's K in order by pairs as IREE's
// data-tiled bf16 GEMM sums them${rounded_doc}; no packed copy of w exists. a is tiled as the GEMM reads it
// (16 rows x 2 of K; each pair a 32-bit word) by the executable @${x_exe} (gemm_x_executable.mlir).
func.func private @${name}(%a: tensor<${a_shape}xbf16>, %b: tensor<${N}x${K}xbf16>)
    -> tensor<${out_shape}x${out_elem}> {
  %c0 = arith.constant 0 : index${a_dims_defs}${collapse}
  %m = ${m_value}
  %a_any = tensor.cast %a_rows : tensor<${M}x${K}xbf16> to tensor<?x${K}xbf16>
  %tiles = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%m]
  %x_pairs = flow.dispatch @${x_exe}::@${x_fn}[%m](%a_any, %m)
      : (tensor<?x${K}xbf16>{%m}, index) -> tensor<?x${KH}x16xi32>{%tiles}
${b_panels}
  %sums, %acc = flow.dispatch @${exe}::@${fn}[%m](%x_pairs, ${b_value}, %m)
      : (tensor<?x${KH}x16xi32>{%tiles}, ${b_type}, index) -> ${acc_types}
  %acc_rows = tensor.cast %acc : tensor<?x${N}x${out_elem}> to tensor<${M}x${N}x${out_elem}>${expand}
  return %acc_out : tensor<${out_shape}x${out_elem}>
}
