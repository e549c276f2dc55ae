// snippet: reads ${v}:vector<16xf32> %out:memref<?x${N}xbf16> ${row}:index ${in}:i1 %n:index; defines
              // row ${i}'s outputs rounded, where the row is within M
              scf.if ${in} {
                %${p}h = arith.truncf ${v} : vector<16xf32> to vector<16xbf16>
                vector.store %${p}h, %out[${row}, %n] : memref<?x${N}xbf16>, vector<16xbf16>
              }
