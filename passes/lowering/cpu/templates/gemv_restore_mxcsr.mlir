      // snippet: reads %mxcsr_saved:!llvm.ptr; defines
      // the worker's MXCSR as it was before the loop (gemv_defs_f32.mlir)
      llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%mxcsr_saved) : (!llvm.ptr) -> ()
