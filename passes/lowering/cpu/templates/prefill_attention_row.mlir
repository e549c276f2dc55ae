// snippet: reads %i0:index %t0:index %t_last:index %j0:index %b:index %c0:index %mask:memref<${B}x?x${S}xf32> %tile:memref<${R}x${L}xf32> %neg_inf_l:vector<${L}xf32> %factor_l:vector<${L}xf32>; defines %${p}slot:index %${p}i:index %${p}s:vector<${L}xf32>
            // row %i0 + ${u} of the block over the tile: its scores (x factor + mask; -inf where
            // masked), whose maximum prefill_attention_max_half.mlir then takes
            %${p}slot = arith.constant ${u} : index
            %${p}i = arith.addi %i0, %${p}slot : index
            %${p}ti_all = arith.addi %t0, %${p}i : index
            %${p}ti = arith.minui %${p}ti_all, %t_last : index
            %${p}mk = vector.load %mask[%b, %${p}ti, %j0] : memref<${B}x?x${S}xf32>, vector<${L}xf32>
            %${p}open = arith.cmpf une, %${p}mk, %neg_inf_l : vector<${L}xf32>
            %${p}raw = vector.load %tile[%${p}i, %c0] : memref<${R}x${L}xf32>, vector<${L}xf32>
            %${p}scaled = arith.mulf %${p}raw, %factor_l : vector<${L}xf32>
            %${p}added = arith.addf %${p}scaled, %${p}mk : vector<${L}xf32>
            %${p}s = arith.select %${p}open, %${p}added, %neg_inf_l : vector<${L}xi1>, vector<${L}xf32>
