  // snippet: reads %b:tensor<${N}x${AK}xi8> %sb:${sb_type}; defines %${p}wp:tensor<${NG8}x${KQ}x32xi8> %${p}ws:tensor<${KH}x${N}xf32>; holes twice_b decode_b
  // B laid out for the integer GEMM (a constant: IREE lays it out once, at load): its codes as
  // their values times 2 plus 12, per 8 rows and 4 of K the 8 rows' 4 bytes each (%${p}wp); its
  // block scales decoded${w_doc}, each 16's, transposed (%${p}ws)
  %${p}pairs = tensor.expand_shape %b [[0, 1], [2, 3]] output_shape [${NG8}, 8, ${KQ}, 2]
      : tensor<${N}x${AK}xi8> into tensor<${NG8}x8x${KQ}x2xi8>
  %${p}wp_empty = tensor.empty() : tensor<${NG8}x${KQ}x8x2x2xi8>
  %${p}wp_quads = linalg.generic {
      indexing_maps = [affine_map<(g, q, j, h, s) -> (g, j, q, h)>,
                       affine_map<(g, q, j, h, s) -> (g, q, j, h, s)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%${p}pairs : tensor<${NG8}x8x${KQ}x2xi8>) outs(%${p}wp_empty : tensor<${NG8}x${KQ}x8x2x2xi8>) {
  ^bb0(%${p}qb_byte: i8, %${p}o: i8):
    %${p}qb_s = linalg.index 4 : index
    %${p}qb_hi = arith.index_cast %${p}qb_s : index to i8
    %${p}qb_four = arith.constant 4 : i8
    %${p}qb_fifteen = arith.constant 15 : i8
    %${p}qb_nshift = arith.muli %${p}qb_hi, %${p}qb_four : i8
    %${p}qb_nshifted = arith.shrui %${p}qb_byte, %${p}qb_nshift : i8
    %${p}qb_nib = arith.andi %${p}qb_nshifted, %${p}qb_fifteen : i8  // the even code low, the odd high
${twice_b}
    %${p}c12 = arith.constant 12 : i8
    %${p}u = arith.addi %${p}qb_twice, %${p}c12 : i8
    linalg.yield %${p}u : i8
  } -> tensor<${NG8}x${KQ}x8x2x2xi8>
  %${p}wp = tensor.collapse_shape %${p}wp_quads [[0], [1], [2, 3, 4]]
      : tensor<${NG8}x${KQ}x8x2x2xi8> into tensor<${NG8}x${KQ}x32xi8>
  %${p}ws_empty = tensor.empty() : tensor<${KS}x${R}x${N}xf32>
  %${p}ws_blocks = linalg.generic {
      indexing_maps = [affine_map<(b, t, n) -> (n, b)>, affine_map<(b, t, n) -> (b, t, n)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sb : ${sb_type}) outs(%${p}ws_empty : tensor<${KS}x${R}x${N}xf32>) {
  ^bb0(%${p}sbd_code: i8, %${p}o: f32):
${decode_b}
    %${p}w_factor = arith.constant ${w_factor} : f32
    %${p}q = arith.mulf ${b_val}, %${p}w_factor : f32
    linalg.yield %${p}q : f32
  } -> tensor<${KS}x${R}x${N}xf32>
  %${p}ws = tensor.collapse_shape %${p}ws_blocks [[0, 1], [2]] : tensor<${KS}x${R}x${N}xf32> into tensor<${KH}x${N}xf32>
