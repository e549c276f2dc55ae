// compute_scale (NVFP4 block decode scale, torchao's order, f32):
// d = cast_e4m3(clamp((block_amax / 6) / g, 2^-6, 448)); the two divisions as IEEE f32 rounds
// them (in f64 from exact operands), the lower clamp at E4M3's smallest normal as torchao has it.
func.func private @${name}(%amax: tensor<${Mb}x${Kb}xf32>, %g: tensor<f32>)
    -> tensor<${Mb}x${Kb}xi8> attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${Mb}x${Kb}xi8>
  %codes = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> ()>,
                       affine_map<(i, k) -> (i, k)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%amax, %g : tensor<${Mb}x${Kb}xf32>, tensor<f32>)
      outs(%empty : tensor<${Mb}x${Kb}xi8>) {
  ^bb0(%a: f32, %gv: f32, %o: i8):
${a_f64}
    %six = arith.constant 6.0 : f64
    %q1_64 = arith.divf %a_f64, %six : f64
    %q1_abs = math.absf %q1_64 : f64
${q1_f32}
${q1_back}
${g_f64}
    %q2_64 = arith.divf %q1b_f64, %g_f64 : f64
    %q2 = arith.truncf %q2_64 : f64 to f32
    %lo = arith.constant 0x3C800000 : f32
    %hi = arith.constant 448.0 : f32
    %q2_lo = arith.maximumf %q2, %lo : f32
    %clamped = arith.minimumf %q2_lo, %hi : f32
    %one = arith.constant 1.0 : f32
${encode}
    linalg.yield %byte : i8
  } -> tensor<${Mb}x${Kb}xi8>
  return %codes : tensor<${Mb}x${Kb}xi8>
}
