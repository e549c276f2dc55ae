// fused_quantize on cuda: amax per block, scale (${rule}), cast to ${format} and the scales
// written straight into the GEMM layout (${layout}), in one pass over x by ${kernel}
// (${outputs}).
func.func private @${name}(${params}) -> (${result_types}) attributes {${attrs}} {${m_defs}
  %rows = ${rows}
  %cols = arith.constant ${cols} : i32
${extra_constants}${extern}
  return ${results} : ${result_types}
}
