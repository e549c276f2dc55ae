          // snippet: reads %${p}k:index %${p}k32:index %${p}p_a:vector<${L}xf32> %${p}p_b:vector<${L}xf32> ${acc_a}:vector<${L}xf32> ${acc_b}:vector<${L}xf32> %factors:memref<${KB}xf32> %c_bk:index; defines %${p}next_a:vector<${L}xf32> %${p}next_b:vector<${L}xf32>
          // mxfp8: each 32 codes' products (%${p}p_a, %${p}p_b: gemv_products_*.mlir)
          // times their K block's factor (x's scale times the row's, made once a row:
          // gemv_row_factors_e8m0.mlir; exact: powers of two), added to the accumulators
          %${p}kb_a = arith.divui %${p}k, %c_bk : index
          %${p}kb_b = arith.divui %${p}k32, %c_bk : index
          %${p}s_a = memref.load %factors[%${p}kb_a] : memref<${KB}xf32>
          %${p}s_b = memref.load %factors[%${p}kb_b] : memref<${KB}xf32>
          %${p}sv_a = vector.broadcast %${p}s_a : f32 to vector<${L}xf32>
          %${p}sv_b = vector.broadcast %${p}s_b : f32 to vector<${L}xf32>
          %${p}next_a = vector.fma %${p}p_a, %${p}sv_a, ${acc_a} : vector<${L}xf32>
          %${p}next_b = vector.fma %${p}p_b, %${p}sv_b, ${acc_b} : vector<${L}xf32>
