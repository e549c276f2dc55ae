// snippet: reads ${acc}:vector<16xf32> ${dst}:${dst_type}${dst_reads}; defines
            // row ${i}'s ${what} (read:${dst_reads})
            vector.store ${acc}, ${dst}[${dst_at}] : ${dst_type}, vector<16xf32>
