          // snippet: reads %${p}k:index %${p}p:vector<16xf32> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32> %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}xf32> %nb:index %c_bk:index; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>
          // fp8-block: the 64 codes' products (%${p}p: gemv_products_f32_block.mlir), all of one
          // K block, times x's and the row's scale of that block (exact: powers of two), added
          // to the first accumulator (the second as it was: x + -0.0 is x, folded away)
          %${p}kb = arith.divui %${p}k, %c_bk : index
          %${p}sx = memref.load %xs[%${p}kb] : memref<${KB}xf32>
          %${p}sw = memref.load %ws[%nb, %${p}kb] : memref<${RB}x${WKB}xf32>
          %${p}s = arith.mulf %${p}sx, %${p}sw : f32
          %${p}sv = vector.broadcast %${p}s : f32 to vector<16xf32>
          %${p}next_a = vector.fma %${p}p, %${p}sv, ${acc_a} : vector<16xf32>
          %${p}neg_zero = arith.constant dense<-0.0> : vector<16xf32>
          %${p}next_b = arith.addf ${acc_b}, %${p}neg_zero : vector<16xf32>
