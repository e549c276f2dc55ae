  // %acc = %a_f32 @ %b_f32^T by prefill-gemm's bf16 GEMM: @${callee}, the func.func that
  // gemm.bf16_gemm_definitions writes beside this definition (A tiled by one executable, then B
  // read as stored panels of 16 rows, laid out once when the module loads, and multiplied by
  // vdpbf16ps), f32 sums of the exact products, each output's K in order by pairs as IREE's
  // data-tiled GEMM sums them, stored row-major: with a dynamic number of rows IREE's GEMM
  // writes its outputs in tiles that a dispatch of their own unpacks.
  %acc = func.call @${callee}(%a_f32, %b_f32)
      : (tensor<${a_shape}xbf16>, tensor<${N}x${K}xbf16>) -> tensor<${out_shape}xf32>
