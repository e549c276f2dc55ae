      // snippet: reads; defines %factors:memref<${KB}xf32>
      // AVX2's block factors: each K block's x scale times the row's (or the row block's), in
      // f32, made before the rows' loops that read them (the workgroup's stack, ${KB} floats)
      %factors = memref.alloca() : memref<${KB}xf32>
