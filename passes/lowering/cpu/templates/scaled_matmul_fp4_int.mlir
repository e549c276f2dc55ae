// scaled_matmul (${fmt_doc}; many rows of A, B stored [N, K]) as a GEMM in integers (AVX2: the
// executable @${exe}, int_gemm_executable.mlir): out = sum over K's blocks of ${BK} of the block's
// E2M1 products times its two block scales${alpha_doc}. E2M1 values times 2 are the integers
// -12..12, so each 16 codes' products are summed exactly (vpmaddubsw); the f32 sums run over
// those 16s (a block of ${BK}: ${R} of them, its scales repeated). The executable's operands:
//   %xq: A's codes as their values times 2, signed bytes [M, ${K}];
//   %xo: 12 times each 16 of %xq's sum (the products of B's offset), i32 [M, ${KH}];
//   %xs: A's block scales decoded, each 16's, f32 [M, ${KH}];
//   ${b_doc}
func.func private @${name}(${args})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
  %c0 = arith.constant 0 : index${a_dims_defs}${collapse}
  %m = ${m_value}
  %a_any = tensor.cast %a_rows : tensor<${M}x${AK}xi8> to tensor<?x${AK}xi8>
  %sa_any = tensor.cast %sa : ${sa_type} to tensor<?x${KS}xi8>
  %xq_empty = tensor.empty(%m) : tensor<?x${AK}x2xi8>
  %xq_pairs = linalg.generic {
      indexing_maps = [affine_map<(r, j, h) -> (r, j)>, affine_map<(r, j, h) -> (r, j, h)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a_any : tensor<?x${AK}xi8>) outs(%xq_empty : tensor<?x${AK}x2xi8>) {
  ^bb0(%qa_byte: i8, %o: i8):
    %qa_h = linalg.index 2 : index
    %qa_hi = arith.index_cast %qa_h : index to i8
    %qa_four = arith.constant 4 : i8
    %qa_fifteen = arith.constant 15 : i8
    %qa_nshift = arith.muli %qa_hi, %qa_four : i8
    %qa_nshifted = arith.shrui %qa_byte, %qa_nshift : i8
    %qa_nib = arith.andi %qa_nshifted, %qa_fifteen : i8  // the even code low, the odd high
${twice_a}
    linalg.yield %qa_twice : i8
  } -> tensor<?x${AK}x2xi8>
  %xq = tensor.collapse_shape %xq_pairs [[0], [1, 2]] : tensor<?x${AK}x2xi8> into tensor<?x${K}xi8>
  %xq_blocks = tensor.expand_shape %xq [[0], [1, 2]] output_shape [%m, ${KH}, 16]
      : tensor<?x${K}xi8> into tensor<?x${KH}x16xi8>
  %i0 = arith.constant 0 : i32
  %xo_empty = tensor.empty(%m) : tensor<?x${KH}xi32>
  %xo_zero = linalg.fill ins(%i0 : i32) outs(%xo_empty : tensor<?x${KH}xi32>) -> tensor<?x${KH}xi32>
  %xo = linalg.generic {
      indexing_maps = [affine_map<(r, b, t) -> (r, b, t)>, affine_map<(r, b, t) -> (r, b)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xq_blocks : tensor<?x${KH}x16xi8>) outs(%xo_zero : tensor<?x${KH}xi32>) {
  ^bb0(%v: i8, %acc: i32):
    %w = arith.extsi %v : i8 to i32
    %i12 = arith.constant 12 : i32
    %o = arith.muli %w, %i12 : i32
    %sum = arith.addi %acc, %o : i32
    linalg.yield %sum : i32
  } -> tensor<?x${KH}xi32>
  %xs_empty = tensor.empty(%m) : tensor<?x${KS}x${R}xf32>
  %xs_blocks = linalg.generic {
      indexing_maps = [affine_map<(r, b, t) -> (r, b)>, affine_map<(r, b, t) -> (r, b, t)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sa_any : tensor<?x${KS}xi8>) outs(%xs_empty : tensor<?x${KS}x${R}xf32>) {
  ^bb0(%sad_code: i8, %o: f32):
${decode_a}
    linalg.yield ${a_val} : f32
  } -> tensor<?x${KS}x${R}xf32>
  %xs = tensor.collapse_shape %xs_blocks [[0], [1, 2]] : tensor<?x${KS}x${R}xf32> into tensor<?x${KH}xf32>
${b_defs}
  %acc = flow.dispatch @${exe}::@${fn}[%m](%xq, %xs, %xo, ${b_args}, %m)
      : (tensor<?x${K}xi8>{%m}, tensor<?x${KH}xf32>{%m}, tensor<?x${KH}xi32>{%m},
         ${b_types}, index) -> tensor<?x${N}xf32>{%m}
  %acc_rows = tensor.cast %acc : tensor<?x${N}xf32> to tensor<${M}x${N}xf32>${expand}
  // mxfp4's epilogue: the sums times a quarter (exact; each 16 codes' integer sum is 4 times the
  // products'); unused under nvfp4
  %quarter = arith.constant dense<0.25> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
${epilogue}
  return %out : tensor<${out_shape}xf32>
}

