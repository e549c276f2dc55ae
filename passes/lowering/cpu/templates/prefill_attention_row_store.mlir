// snippet: reads ${value}:vector<${W}xf32> ${buffer}:memref<${R}x${W}xf32> ${i}:index %c0:index; defines
            vector.store ${value}, ${buffer}[${i}, %c0] : memref<${R}x${W}xf32>, vector<${W}xf32>
