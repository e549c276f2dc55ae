// swizzle (mx layout${transposed_note}): compact scales -> GEMM-ready. Each output byte finds
// its S[row, col] by inverting the layout; tile padding is zero.
func.func private @${name}(%s: tensor<${in_shape}x${elem}>) -> tensor<${size}x${elem}>
    attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${out_sizes}) : tensor<${size}x${elem}>
  %out = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%empty : tensor<${size}x${elem}>) {
  ^bb0(%o: ${elem}):
    %i = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %ntc = arith.constant ${col_tiles} : index
${nrows_def}
    %ncols = arith.constant ${cols} : index
    %tile = arith.divui %i, %c512 : index
    %within = arith.remui %i, %c512 : index
    %pos = arith.divui %within, %c4 : index
    %cc = arith.remui %within, %c4 : index
    %pq = arith.remui %pos, %c4 : index
    %pr = arith.divui %pos, %c4 : index
    %ii0 = arith.muli %pq, %c32 : index
    %ii = arith.addi %ii0, %pr : index
    %tr = arith.divui %tile, %ntc : index
    %tc = arith.remui %tile, %ntc : index
    %row0 = arith.muli %tr, %c128 : index
    %row = arith.addi %row0, %ii : index
    %col0 = arith.muli %tc, %c4 : index
    %col = arith.addi %col0, %cc : index
    %row_ok = arith.cmpi ult, %row, ${nrows} : index
    %col_ok = arith.cmpi ult, %col, %ncols : index
    %valid = arith.andi %row_ok, %col_ok : i1
    %zero_idx = arith.constant 0 : index
    %rr_i = arith.select %valid, %row, %zero_idx : index
    %cc_i = arith.select %valid, %col, %zero_idx : index
    %v = tensor.extract %s[${read}] : tensor<${in_shape}x${elem}>
    %zero = arith.constant 0 : ${elem}
    %r = arith.select %valid, %v, %zero : ${elem}
    linalg.yield %r : ${elem}
  } -> tensor<${size}x${elem}>
  return %out : tensor<${size}x${elem}>
}
