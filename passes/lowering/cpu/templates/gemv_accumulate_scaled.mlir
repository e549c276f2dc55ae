          // snippet: reads %${p}k:index %${p}k32:index %${p}p_a:vector<16xf32> %${p}p_b:vector<16xf32> ${acc_a}:vector<16xf32> ${acc_b}:vector<16xf32> %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}x${ws_elem}> %nb:index %c_bk:index; defines %${p}next_a:vector<16xf32> %${p}next_b:vector<16xf32>; holes w_scales
          // block scales: each 32 codes' products (%${p}p_a, %${p}p_b: gemv_products_*.mlir),
          // times x's and the row's scale of their K block (exact: powers of two; the row's
          // from %ws, ${RB} x ${WKB} ${ws_elem}: w_scales), added to the accumulators
          %${p}kb_a = arith.divui %${p}k, %c_bk : index
          %${p}kb_b = arith.divui %${p}k32, %c_bk : index
          %${p}sx_a = memref.load %xs[%${p}kb_a] : memref<${KB}xf32>
          %${p}sx_b = memref.load %xs[%${p}kb_b] : memref<${KB}xf32>
${w_scales}
          %${p}s_a = arith.mulf %${p}sx_a, %${p}swa_f32 : f32
          %${p}s_b = arith.mulf %${p}sx_b, %${p}swb_f32 : f32
          %${p}sv_a = vector.broadcast %${p}s_a : f32 to vector<16xf32>
          %${p}sv_b = vector.broadcast %${p}s_b : f32 to vector<16xf32>
          %${p}next_a = vector.fma %${p}p_a, %${p}sv_a, ${acc_a} : vector<16xf32>
          %${p}next_b = vector.fma %${p}p_b, %${p}sv_b, ${acc_b} : vector<16xf32>
