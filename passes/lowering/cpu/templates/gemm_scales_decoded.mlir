// snippet: reads; defines %sdec:memref<16x32xf32>
      // the 16 rows' block scales of a K block (up to 32 a row) in f32, decoded once as each
      // K block begins (gemm_scales_rows.mlir), not one by one as their codes are
      %sdec = memref.alloca() : memref<16x32xf32>
