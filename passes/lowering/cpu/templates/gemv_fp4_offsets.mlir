  // snippet: reads %${p}values:tensor<${XK}xi8>; defines %${p}offsets:tensor<${LANES}xi32>
  // the AVX2 loop's offsets (gemv_fp4_decode_i8.mlir multiplies x's integers with B's plus
  // 12): for each 4 bytes of a row (4 even codes, 4 odd), 12 times the sum of the x integers
  // they multiply (%${p}values: the even elements, then the odd ones)
  %${p}grouped = tensor.expand_shape %${p}values [[0, 1, 2]] output_shape [2, ${LANES}, 4]
      : tensor<${XK}xi8> into tensor<2x${LANES}x4xi8>
  %${p}zero = arith.constant 0 : i32
  %${p}offsets_empty = tensor.empty() : tensor<${LANES}xi32>
  %${p}offsets_init = linalg.fill ins(%${p}zero : i32)
      outs(%${p}offsets_empty : tensor<${LANES}xi32>) -> tensor<${LANES}xi32>
  %${p}offsets = linalg.generic {
      indexing_maps = [affine_map<(l, h, j) -> (h, l, j)>, affine_map<(l, h, j) -> (l)>],
      iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%${p}grouped : tensor<2x${LANES}x4xi8>) outs(%${p}offsets_init : tensor<${LANES}xi32>) {
  ^bb0(%${p}v: i8, %${p}sum: i32):
    %${p}twelve = arith.constant 12 : i32
    %${p}wide = arith.extsi %${p}v : i8 to i32
    %${p}times = arith.muli %${p}wide, %${p}twelve : i32
    %${p}next = arith.addi %${p}sum, %${p}times : i32
    linalg.yield %${p}next : i32
  } -> tensor<${LANES}xi32>
