// scaled_matmul (FP8 or NVFP4, ${scale_doc}; many rows of A, B stored [N, K]) as a GEMM that
// reads B's codes as stored and decodes them in its loop (the executable @${exe},
// gemm_executable.mlir): acc = dequant(a) @ dequant(b)^T, the dequantized values exact in
// bf16 (block scales multiplied in as decoded), f32 sums; no decoded or packed copy of B exists.
// A's codes are dequantized and tiled as the data-tiled GEMM's (16 rows x 2 of K; each pair a
// 32-bit word) by the executable @${x_exe} (gemm_x_executable.mlir); per-tensor (nvfp4:
// global) scales multiply acc ${alpha_where}, as the data-tiled GEMM's epilogue${rounded_doc}.
func.func private @${name}(${args})
    -> tensor<${out_shape}x${out_elem}> attributes {${attrs}} {
  %c0 = arith.constant 0 : index${a_dims_defs}${collapse}
  %m = ${m_value}
  %a_any = tensor.cast %a_rows : tensor<${M}x${AK}xi8> to tensor<?x${AK}xi8>
  %tiles = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%m]${x_scales}
  %x_pairs = flow.dispatch @${x_exe}::@${x_fn}[%m](%a_any, ${x_operands}%m)
      : (tensor<?x${AK}xi8>{%m}, ${x_types}index) -> tensor<?x${KH}x16xi32>{%tiles}
  %sums, %acc = flow.dispatch @${exe}::@${fn}[%m](%x_pairs, %b, ${gemm_args}%m)
      : (tensor<?x${KH}x16xi32>{%tiles}, tensor<${N}x${BK}xi8>, ${gemm_arg_types}index)
      -> ${acc_types}
  %acc_rows = tensor.cast %acc : tensor<?x${N}x${out_elem}> to tensor<${M}x${N}x${out_elem}>${expand}
${epilogue}
  return %out : tensor<${out_shape}x${out_elem}>
}
