// scaled_matmul (${fmt_doc}; many rows of A, B stored [N, K]) as a GEMM in integers (AVX2: the
// executable @${exe}, int_gemm_executable.mlir): out = sum over K's blocks of ${BK} of the block's
// E2M1 products times its two block scales${alpha_doc}. E2M1 values times 2 are the integers
// -12..12, so each 16 codes' products are summed exactly (vpmaddubsw); the f32 sums run over
// those 16s (a block of ${BK}: ${R} of them, its scales repeated). The executable's operands:
//   %xq: A's codes as their values times 2, signed bytes [M, ${K}];
//   %xo: 12 times each 16 of %xq's sum (the products of B's offset), i32 [M, ${KH}];
//   %xs: A's block scales decoded, each 16's, f32 [M, ${KH}];
//   %wp: B's codes as their values times 2 plus 12, unsigned bytes [${NG8}, ${KQ}, 32]: per 8
//        rows of B and 4 of K, the 8 rows' 4 bytes each (B constant: laid out once, at load);
//   %ws: B's block scales decoded${w_doc}, each 16's, transposed, f32 [${KH}, ${N}].
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
  %b_pairs = tensor.expand_shape %b [[0, 1], [2, 3]] output_shape [${NG8}, 8, ${KQ}, 2]
      : tensor<${N}x${AK}xi8> into tensor<${NG8}x8x${KQ}x2xi8>
  %wp_empty = tensor.empty() : tensor<${NG8}x${KQ}x8x2x2xi8>
  %wp_quads = linalg.generic {
      indexing_maps = [affine_map<(g, q, j, h, s) -> (g, j, q, h)>,
                       affine_map<(g, q, j, h, s) -> (g, q, j, h, s)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%b_pairs : tensor<${NG8}x8x${KQ}x2xi8>) outs(%wp_empty : tensor<${NG8}x${KQ}x8x2x2xi8>) {
  ^bb0(%qb_byte: i8, %o: i8):
    %qb_s = linalg.index 4 : index
    %qb_hi = arith.index_cast %qb_s : index to i8
    %qb_four = arith.constant 4 : i8
    %qb_fifteen = arith.constant 15 : i8
    %qb_nshift = arith.muli %qb_hi, %qb_four : i8
    %qb_nshifted = arith.shrui %qb_byte, %qb_nshift : i8
    %qb_nib = arith.andi %qb_nshifted, %qb_fifteen : i8  // the even code low, the odd high
${twice_b}
    %c12 = arith.constant 12 : i8
    %u = arith.addi %qb_twice, %c12 : i8
    linalg.yield %u : i8
  } -> tensor<${NG8}x${KQ}x8x2x2xi8>
  %wp = tensor.collapse_shape %wp_quads [[0], [1], [2, 3, 4]]
      : tensor<${NG8}x${KQ}x8x2x2xi8> into tensor<${NG8}x${KQ}x32xi8>
  %ws_empty = tensor.empty() : tensor<${KS}x${R}x${N}xf32>
  %ws_blocks = linalg.generic {
      indexing_maps = [affine_map<(b, t, n) -> (n, b)>, affine_map<(b, t, n) -> (b, t, n)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sb : ${sb_type}) outs(%ws_empty : tensor<${KS}x${R}x${N}xf32>) {
  ^bb0(%sbd_code: i8, %o: f32):
${decode_b}
    %w_factor = arith.constant ${w_factor} : f32
    %q = arith.mulf ${b_val}, %w_factor : f32
    linalg.yield %q : f32
  } -> tensor<${KS}x${R}x${N}xf32>
  %ws = tensor.collapse_shape %ws_blocks [[0, 1], [2]] : tensor<${KS}x${R}x${N}xf32> into tensor<${KH}x${N}xf32>
  %acc = flow.dispatch @${exe}::@${fn}[%m](%xq, %xs, %xo, %wp, %ws, %m)
      : (tensor<?x${K}xi8>{%m}, tensor<?x${KH}xf32>{%m}, tensor<?x${KH}xi32>{%m},
         tensor<${NG8}x${KQ}x32xi8>, tensor<${KH}x${N}xf32>, index) -> tensor<?x${N}xf32>{%m}
  %acc_rows = tensor.cast %acc : tensor<?x${N}xf32> to tensor<${M}x${N}xf32>${expand}
  // mxfp4's epilogue: the sums times a quarter (exact; each 16 codes' integer sum is 4 times the
  // products'); unused under nvfp4
  %quarter = arith.constant dense<0.25> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
${epilogue}
  return %out : tensor<${out_shape}xf32>
}

