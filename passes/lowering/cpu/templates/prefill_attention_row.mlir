// snippet: reads %i0:index %t0:index %t_last:index %j0:index %b:index %c0:index %mask:memref<${B}x?x${S}xf32> %tile:memref<${R}x${L}xf32> %ms:memref<${R}xf32> %ls:memref<${R}xf32> %ps:memref<${U}x${L}xf32> %os:memref<${R}x${E}xf32> %neg_inf:f32 %zero:f32 %neg_inf_l:vector<${L}xf32> %factor_l:vector<${L}xf32>; defines %${p}slot:index %${p}i:index %${p}o:vector<${E}xf32>
            // row %i0 + ${u} of the block over the tile: its scores (x factor + mask; -inf where
            // masked), the running maximum m and sum l, the tile's exp(score - m) into
            // %ps[${u}], the row's output so far rescaled (exp(m_old - m)); a row still closed
            // to every key takes its exps from 0 (all 0: its m, l and output stay -inf, 0, 0)
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
            %${p}tile_max = vector.reduction <maximumf>, %${p}s : vector<${L}xf32> into f32
            %${p}m_old = memref.load %ms[%${p}i] : memref<${R}xf32>
            %${p}m_new = arith.maximumf %${p}m_old, %${p}tile_max : f32
            %${p}closed = arith.cmpf oeq, %${p}m_new, %neg_inf : f32
            %${p}m_base = arith.select %${p}closed, %zero, %${p}m_new : f32
            %${p}shift = arith.subf %${p}m_old, %${p}m_base : f32
            %${p}alpha = math.exp %${p}shift : f32
            %${p}base_l = vector.broadcast %${p}m_base : f32 to vector<${L}xf32>
            %${p}d = arith.subf %${p}s, %${p}base_l : vector<${L}xf32>
            %${p}p = math.exp %${p}d : vector<${L}xf32>
            %${p}p_sum = vector.reduction <add>, %${p}p fastmath<reassoc> : vector<${L}xf32> into f32
            %${p}l_old = memref.load %ls[%${p}i] : memref<${R}xf32>
            %${p}l_scaled = arith.mulf %${p}l_old, %${p}alpha : f32
            %${p}l_new = arith.addf %${p}l_scaled, %${p}p_sum : f32
            memref.store %${p}l_new, %ls[%${p}i] : memref<${R}xf32>
            memref.store %${p}m_new, %ms[%${p}i] : memref<${R}xf32>
            vector.store %${p}p, %ps[%${p}slot, %c0] : memref<${U}x${L}xf32>, vector<${L}xf32>
            %${p}o_old = vector.load %os[%${p}i, %c0] : memref<${R}x${E}xf32>, vector<${E}xf32>
            %${p}alpha_e = vector.broadcast %${p}alpha : f32 to vector<${E}xf32>
            %${p}o = arith.mulf %${p}o_old, %${p}alpha_e : vector<${E}xf32>
