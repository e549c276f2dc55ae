// snippet: reads %qs:memref<${R}x${E}xf32> %e:index %ktv:vector<${L}xf32> ${acc}:vector<${L}xf32>; defines %${p}next:vector<${L}xf32>
            // query row ${i} of the block: its scores over the tile's keys += q[${i}, e] x K[keys, e]
            %${p}row = arith.constant ${i} : index
            %${p}q = memref.load %qs[%${p}row, %e] : memref<${R}x${E}xf32>
            %${p}qv = vector.broadcast %${p}q : f32 to vector<${L}xf32>
            %${p}next = vector.fma %${p}qv, %ktv, ${acc} : vector<${L}xf32>
