// snippet: reads ${acc}:vector<16xf32> %out:${sums_type}${sums_reads} ${in}:i1; defines
            // row ${i}'s sums, where the row is within M (read:${sums_reads})
            scf.if ${in} {
              vector.store ${acc}, %out[${sums_at}] : ${sums_type}, vector<16xf32>
            }
