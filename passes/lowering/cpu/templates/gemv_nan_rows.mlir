  // snippet: reads ${codes}:tensor<${N}x${K}xi8> %acc_sums:tensor<${N}xf32>; defines %acc:tensor<${N}xf32> %row_mags:tensor<${N}xi8> %row_mags_init:tensor<${N}xi8> %row_mags_empty:tensor<${N}xi8> %row_zero:i8 %acc_empty:tensor<${N}xf32>; locals %code %mag %most %next %low7 %sum %row_mag %nan %nan_mag %is_nan %o %r
  // E4M3's NaN (magnitude 0x7F) among ${codes} (B's FP8 codes, or nvfp4's E4M3 block scales),
  // which AVX2's decodes read as a number (gemv_e4m3_f32.mlir into f32 bits,
  // gemv_fp4_scales_f16.mlir through f16): each row's largest code magnitude, and the row's
  // sum NaN where that is 0x7F, as the data-tiled GEMM's. It depends on B alone: for a weight IREE computes it
  // once, when the module loads (a constant expression hoisted into the initializer).
  %row_zero = arith.constant 0 : i8
  %row_mags_empty = tensor.empty() : tensor<${N}xi8>
  %row_mags_init = linalg.fill ins(%row_zero : i8) outs(%row_mags_empty : tensor<${N}xi8>) -> tensor<${N}xi8>
  %row_mags = linalg.generic {
      indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>],
      iterator_types = ["parallel", "reduction"]}
      ins(${codes} : tensor<${N}x${K}xi8>) outs(%row_mags_init : tensor<${N}xi8>) {
  ^bb0(%code: i8, %most: i8):
    %low7 = arith.constant 127 : i8
    %mag = arith.andi %code, %low7 : i8
    %next = arith.maxui %most, %mag : i8
    linalg.yield %next : i8
  } -> tensor<${N}xi8>
  %acc_empty = tensor.empty() : tensor<${N}xf32>
  %acc = linalg.generic {
      indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> (n)>, affine_map<(n) -> (n)>],
      iterator_types = ["parallel"]}
      ins(%acc_sums, %row_mags : tensor<${N}xf32>, tensor<${N}xi8>)
      outs(%acc_empty : tensor<${N}xf32>) {
  ^bb0(%sum: f32, %row_mag: i8, %o: f32):
    %nan = arith.constant 0x7FC00000 : f32
    %nan_mag = arith.constant 127 : i8
    %is_nan = arith.cmpi eq, %row_mag, %nan_mag : i8
    %r = arith.select %is_nan, %nan, %sum : f32
    linalg.yield %r : f32
  } -> tensor<${N}xf32>
