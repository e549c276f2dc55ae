      // snippet: reads; defines %f32_shift20:vector<32xi32> %f32_sign_magnitude:vector<32xi32> %f32_factor:f32 %mxcsr_one:i32 %mxcsr_saved:!llvm.ptr %mxcsr_mode:i32 %mxcsr_keep:i32 %mxcsr_no_daz:i32 %mxcsr_slot:!llvm.ptr
      // AVX2's E4M3 decode into f32 bits (gemv_e4m3_f32.mlir): the shift, the f32 sign and
      // E4M3's magnitude bits (0x87F00000); the 2^8 that x leaves out (%f32_factor, a row's
      // sum's; block-scaled products take it from x's scales: gemv_scales_times.mlir). An E4M3
      // subnormal code decodes to an f32 subnormal, which IREE's workers (flush-to-zero and
      // denormals-are-zero) would read as 0: the workgroup clears MXCSR's DAZ bit (6) for its
      // loop and restores the worker's mode after it (gemv_restore_mxcsr.mlir). FTZ stays:
      // every product and sum is normal (x carries 2^112).
      %f32_shift20 = arith.constant dense<20> : vector<32xi32>
      %f32_sign_magnitude = arith.constant dense<-2014314496> : vector<32xi32>
      %f32_factor = arith.constant ${sums_factor} : f32
      %mxcsr_one = llvm.mlir.constant(1 : i32) : i32
      %mxcsr_saved = llvm.alloca %mxcsr_one x i32 : (i32) -> !llvm.ptr
      llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%mxcsr_saved) : (!llvm.ptr) -> ()
      %mxcsr_mode = llvm.load %mxcsr_saved : !llvm.ptr -> i32
      %mxcsr_keep = llvm.mlir.constant(-65 : i32) : i32
      %mxcsr_no_daz = llvm.and %mxcsr_mode, %mxcsr_keep : i32
      %mxcsr_slot = llvm.alloca %mxcsr_one x i32 : (i32) -> !llvm.ptr
      llvm.store %mxcsr_no_daz, %mxcsr_slot : i32, !llvm.ptr
      llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%mxcsr_slot) : (!llvm.ptr) -> ()
