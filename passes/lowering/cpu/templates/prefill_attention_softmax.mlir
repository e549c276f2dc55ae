// snippet: reads %${p}i:index %${p}slot:index %${p}s:vector<${L}xf32> %${p}max1:vector<1xf32> %c0:index %ms:memref<${R}xf32> %ls:memref<${R}xf32> %ps:memref<${U}x${L}xf32> %os:memref<${R}x${E}xf32> %neg_inf:f32 %zero:f32 %one:f32; defines %${p}o:vector<${E}xf32>
            // the row's running maximum m and sum l over the tile (its maximum %${p}max1), the
            // tile's exp(score - m) into %ps[slot], the row's output so far rescaled by
            // exp(m_old - m), computed only where m grew (else exactly 1); a row still closed to
            // every key takes its exps from 0 (all 0: its m, l and output stay -inf, 0, 0)
            %${p}tile_max = vector.extract %${p}max1[0] : f32 from vector<1xf32>
            %${p}m_old = memref.load %ms[%${p}i] : memref<${R}xf32>
            %${p}grew = arith.cmpf ogt, %${p}tile_max, %${p}m_old : f32
            %${p}m_new = arith.select %${p}grew, %${p}tile_max, %${p}m_old : f32
            %${p}closed = arith.cmpf oeq, %${p}m_new, %neg_inf : f32
            %${p}m_base = arith.select %${p}closed, %zero, %${p}m_new : f32
            %${p}alpha = scf.if %${p}grew -> (f32) {
              %${p}shift = arith.subf %${p}m_old, %${p}m_base : f32
              %${p}rescale = math.exp %${p}shift : f32
              scf.yield %${p}rescale : f32
            } else {
              scf.yield %one : f32
            }
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
