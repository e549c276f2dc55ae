          // snippet: reads %${p}k:index %${p}p_a:vector<${L}xf32> %${p}p_b:vector<${L}xf32> ${acc_a}:vector<${L}xf32> ${acc_b}:vector<${L}xf32> %factors:memref<${KB}xf32> %c_bk:index; defines %${p}next_a:vector<${L}xf32> %${p}next_b:vector<${L}xf32>
          // fp8-block: the 64 codes' products, two sums of 32 (%${p}p_a, %${p}p_b:
          // gemv_products_*.mlir), all of one K block (blocks of 128 hold whole loop
          // steps), times that block's factor (x's scale times the rows' scale, made once a
          // workgroup: gemv_block_factors.mlir; exact: powers of two), added to the accumulators
          %${p}kb = arith.divui %${p}k, %c_bk : index
          %${p}s = memref.load %factors[%${p}kb] : memref<${KB}xf32>
          %${p}sv = vector.broadcast %${p}s : f32 to vector<${L}xf32>
          %${p}next_a = vector.fma %${p}p_a, %${p}sv, ${acc_a} : vector<${L}xf32>
          %${p}next_b = vector.fma %${p}p_b, %${p}sv, ${acc_b} : vector<${L}xf32>
