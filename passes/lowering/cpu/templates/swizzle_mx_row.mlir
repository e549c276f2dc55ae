// swizzle (mx layout) of one row's scales: compact [1, ${cols}] -> GEMM-ready. A row alone is
// row 0 of each 128x4 tile: 4 of its scales at the start of each tile's 512 bytes, the rest tile
// padding (zeros). A zero fill and one strided insert (the per-byte layout inversion of
// swizzle_mx.mlir, the same bytes, wrote 128 times as many through index arithmetic).
func.func private @${name}(%s: tensor<1x${cols}x${elem}>) -> tensor<${size}x${elem}>
    attributes {${attrs}} {
  %zero = arith.constant 0 : ${elem}
  %padded = tensor.pad %s low[0, 0] high[0, ${pad}] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : ${elem}
  } : tensor<1x${cols}x${elem}> to tensor<1x${padded_cols}x${elem}>
  %groups = tensor.expand_shape %padded [[0], [1, 2]] output_shape [1, ${col_tiles}, 4]
      : tensor<1x${padded_cols}x${elem}> into tensor<1x${col_tiles}x4x${elem}>
  %row = tensor.collapse_shape %groups [[0, 1], [2]]
      : tensor<1x${col_tiles}x4x${elem}> into tensor<${col_tiles}x4x${elem}>
  %empty = tensor.empty() : tensor<${col_tiles}x512x${elem}>
  %tiles = linalg.fill ins(%zero : ${elem}) outs(%empty : tensor<${col_tiles}x512x${elem}>)
      -> tensor<${col_tiles}x512x${elem}>
  %placed = tensor.insert_slice %row into %tiles[0, 0] [${col_tiles}, 4] [1, 1]
      : tensor<${col_tiles}x4x${elem}> into tensor<${col_tiles}x512x${elem}>
  %out = tensor.collapse_shape %placed [[0, 1]]
      : tensor<${col_tiles}x512x${elem}> into tensor<${size}x${elem}>
  return %out : tensor<${size}x${elem}>
}
