// snippet: reads ${acc}:vector<16xf32> %out:memref<?x${N}xf32> ${row}:index ${in}:i1 %n:index; defines
            // row ${i}'s outputs, where the row is within M
            scf.if ${in} {
              vector.store ${acc}, %out[${row}, %n] : memref<?x${N}xf32>, vector<16xf32>
            }
