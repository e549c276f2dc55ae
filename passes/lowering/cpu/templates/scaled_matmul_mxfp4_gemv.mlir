// scaled_matmul (MXFP4: E2M1 codes, E8M0 scales of 1 x 32 blocks in the mx layout; one row of A,
// B stored [N, K/2]) as a matrix-vector product that reads B's packed codes as stored and
// decodes them in its loop (the executable @${exe}, gemv_fp8_executable.mlir with AVX2's
// gemv_fp4_decode_i8.mlir): each 8 codes' products summed exactly in integers (their offsets
// %x_offsets taken off), times their two block scales' product (powers of two: exact), added up;
// no decoded copy of B.
func.func private @${name}(%a: tensor<${a_shape}xi8>, %sa: ${sa_type},
                            %b: tensor<${N}x${K}xi8>, %sb: ${sb_type})
    -> tensor<${out_shape}xf32> attributes {${attrs}} {
${unswizzle_a}
${unswizzle_b}
${activation}${offsets}
  %n = arith.constant ${N} : index
  %acc = flow.dispatch @${exe}::@${fn}[%n](%x_values, %x_scales, %x_offsets, %b, %b_S)
      : (tensor<${XK}x${x_elem}>, tensor<${KB}xf32>, tensor<${LANES}xi32>, tensor<${N}x${K}xi8>, tensor<${N}x${KB}xi8>)
      -> tensor<${N}xf32>
  %out = tensor.expand_shape %acc [[${out_dims}]] output_shape [${out_sizes}]
      : tensor<${N}xf32> into tensor<${out_shape}xf32>
  return %out : tensor<${out_shape}xf32>
}
