// snippet: reads ${acc}:vector<16xf32> ${dst}:${dst_type}${dst_reads} ${in}:i1; defines
            // row ${i}'s ${what}, where the row is within M (read:${dst_reads})
            scf.if ${in} {
              vector.store ${acc}, ${dst}[${dst_at}] : ${dst_type}, vector<16xf32>
            }
