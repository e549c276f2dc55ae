// snippet: reads ${acc}:vector<16xf32> %out:${sums_type}${sums_reads}; defines
            // row ${i}'s sums (read:${sums_reads})
            vector.store ${acc}, %out[${sums_at}] : ${sums_type}, vector<16xf32>
