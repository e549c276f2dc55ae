// compute_scale (E8M0, rule ${rule}) per block: amax [${Mb}, ${Kb}] -> biased exponent codes.
// v = ${v_doc} is formed exactly as f32 (in f64, exact or correctly rounded, then
// rounded to f32 by hand when it is subnormal, which flush-to-zero arithmetic would lose), then
// the rule gives the code.
func.func private @${name}(%amax: tensor<${Mb}x${Kb}xf32>) -> tensor<${Mb}x${Kb}xi8>
    attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${Mb}x${Kb}xi8>
  %codes = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<${Mb}x${Kb}xf32>) outs(%empty : tensor<${Mb}x${Kb}xi8>) {
  ^bb0(%a: f32, %o: i8):
    %p_const = arith.constant ${p_const} : f64
    %min_normal = arith.constant 0x3810000000000000 : f64
    %two_p149 = arith.constant 0x4940000000000000 : f64
    %abs_mask = arith.constant 2147483647 : i32
    %inf_bits = arith.constant 2139095040 : i32
    %c23 = arith.constant 23 : i32
    %man_mask = arith.constant 8388607 : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c254 = arith.constant 254 : i32
    %c255 = arith.constant 255 : i32
    %a_bits = arith.bitcast %a : f32 to i32
    %a_abs = arith.andi %a_bits, %abs_mask : i32
    %is_nan = arith.cmpi ugt, %a_abs, %inf_bits : i32
    %is_inf = arith.cmpi eq, %a_abs, %inf_bits : i32
${a_f64}
    %p = arith.${p_op} ${a64}, %p_const : f64
    %p_abs = math.absf %p : f64
    %is_normal = arith.cmpf oge, %p_abs, %min_normal : f64
    %v_normal = arith.truncf %p_abs : f64 to f32
    %v_normal_bits = arith.bitcast %v_normal : f32 to i32
    %grid = arith.mulf %p_abs, %two_p149 : f64
    %grid_r = math.roundeven %grid : f64
    %v_sub_bits = arith.fptosi %grid_r : f64 to i32
    %v_bits = arith.select %is_normal, %v_normal_bits, %v_sub_bits : i32
    %exponent = arith.shrui %v_bits, %c23 : i32
    %mantissa = arith.andi %v_bits, %man_mask : i32
${rule_body}
    %byte = arith.trunci %code : i32 to i8
    linalg.yield %byte : i8
  } -> tensor<${Mb}x${Kb}xi8>
  return %codes : tensor<${Mb}x${Kb}xi8>
}
