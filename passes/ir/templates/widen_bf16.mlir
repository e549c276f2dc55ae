func.func private @${name}(%x: ${in_type}) -> ${out_type} {
${dims}
  %empty = tensor.empty(${dim_values}) : ${out_type}
  %wide = linalg.generic {indexing_maps = [${map}, ${map}], iterator_types = [${iterators}]} ins(%x : ${in_type}) outs(%empty : ${out_type}) {
  ^bb0(%v: bf16, %o: f32):
    %bits = arith.bitcast %v : bf16 to i16
    %word = arith.extui %bits : i16 to i32
    %c16 = arith.constant 16 : i32
    %high = arith.shli %word, %c16 : i32
    %f = arith.bitcast %high : i32 to f32
    linalg.yield %f : f32
  } -> ${out_type}
  return %wide : ${out_type}
}
