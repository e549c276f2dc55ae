// scaled_matmul (NVFP4: E2M1 codes, E4M3 scales of 1 x 16 blocks in the mx layout, global decode
// scales; one row of A, B stored [N, K/2]) as a matrix-vector product that reads B's packed codes
// as stored and decodes them in its loop (the executable @${exe}, gemv_fp8_executable.mlir with
// gemv_fp4_decode.mlir, AVX2's gemv_fp4_decode_i8.mlir): each 16 codes' products summed exactly
// (in f32; AVX2: in integers, their offsets %x_offsets taken off), times their two block scales'
// product (exact), added up; the global scales multiply the sums; no decoded copy of B.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type}, %ga: tensor<f32>,
                            %b: tensor<${N}x${K}xi8>, %sb: ${sb_type}, %gb: tensor<f32>)
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
${unswizzle_a}
${unswizzle_b}
${activation}${offsets}
  %n = arith.constant ${N} : index
  ${acc} = flow.dispatch @${exe}::@${fn}[%n](%x_values, %x_scales, ${x_offsets}%b, %b_S)
      : (tensor<${XK}x${x_elem}>, tensor<${KB}xf32>, ${x_offsets_type}tensor<${N}x${K}xi8>, tensor<${N}x${KB}xi8>)
      -> tensor<${N}xf32>${nan_rows}
${alpha}
  return %out : tensor<${out_shape}xf32>
}
