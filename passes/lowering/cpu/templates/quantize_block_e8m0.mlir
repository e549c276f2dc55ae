// quantize (E8M0-scaled blocks of ${bm}x${bk}): data = cast(x * 2^(127 - e)) per block, with a
// multiplier of 1 for e = 0 as TE has it; the cast is the FP8 encoder of encode_fp8.mlir, whose
// multiply is exact here (see below). A block whose scale is NaN (0xFF) encodes as NaN codes.
// The scale codes pass through unchanged.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${Mb}x${Kb}xi8>)
    -> (tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>) attributes {${attrs}} {${m_defs}
${data}
  return %data, %scale : tensor<${M}x${K}xi8>, tensor<${Mb}x${Kb}xi8>
}
