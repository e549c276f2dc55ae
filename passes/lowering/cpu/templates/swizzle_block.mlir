// swizzle (${layout}): compact FP32 block scales -> the GEMM-ready layout
// ${layout_doc}; padding is zero. S[row, k_block] is the compact input${transposed_note}.
func.func private @${name}(%s: tensor<${in_shape}xf32>) -> tensor<${out_shape}xf32>
    attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${out_sizes}) : tensor<${out_shape}xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]}
      outs(%empty : tensor<${out_shape}xf32>) {
  ^bb0(%o: f32):
    %d0 = linalg.index 0 : index
    %d1 = linalg.index 1 : index
${limit_def}
    %valid = arith.cmpi ult, ${padded_index}, ${limit} : index
    %zero_idx = arith.constant 0 : index
    %i0 = arith.select %valid, ${read0}, %zero_idx : index
    %i1 = arith.select %valid, ${read1}, %zero_idx : index
    %v = tensor.extract %s[%i0, %i1] : tensor<${in_shape}xf32>
    %zero = arith.constant 0.0 : f32
    %r = arith.select %valid, %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
