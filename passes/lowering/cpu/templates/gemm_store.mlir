// snippet: reads ${acc}:vector<16xf32> %factor:vector<16xf32> %out:memref<?x${N}xf32> ${row}:index %n:index; defines
            %${p}v = arith.mulf ${acc}, %factor : vector<16xf32>
            vector.store %${p}v, %out[${row}, %n] : memref<?x${N}xf32>, vector<16xf32>
