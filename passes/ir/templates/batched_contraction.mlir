func.func private @${name}(%a: ${a_type}, %b: ${b_type}) -> ${c_type} {
${dims}
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(${dim_values}) : ${c_type}
  %init = linalg.fill ins(%zero : f32) outs(%empty : ${c_type}) -> ${c_type}
  %c = linalg.generic {indexing_maps = [${a_map}, ${b_map}, ${c_map}], iterator_types = [${iterators}]} ins(%a, %b : ${a_type}, ${b_type}) outs(%init : ${c_type}) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> ${c_type}
  return %c : ${c_type}
}
