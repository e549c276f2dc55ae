// snippet: reads %ps:memref<${U}x${L}xf32> %j:index %v_row:vector<${E}xf32> ${slot}:index ${acc}:vector<${E}xf32>; defines %${p}next:vector<${E}xf32>
              // the row's output += exp(score - m) of key %j x its value
              %${p}pj = memref.load %ps[${slot}, %j] : memref<${U}x${L}xf32>
              %${p}pj_e = vector.broadcast %${p}pj : f32 to vector<${E}xf32>
              %${p}next = vector.fma %${p}pj_e, %v_row, ${acc} : vector<${E}xf32>
