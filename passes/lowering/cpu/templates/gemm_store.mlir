// snippet: reads ${acc}:vector<16xf32> %out:memref<?x${N}xf32> ${row}:index %n:index; defines
            vector.store ${acc}, %out[${row}, %n] : memref<?x${N}xf32>, vector<16xf32>
