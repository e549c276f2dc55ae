// snippet: reads ${acc}:vector<${L}xf32> %tile:memref<${R}x${L}xf32> %c0:index; defines
          // query row ${i}'s scores over the tile's keys, kept for its softmax step
          %${p}row = arith.constant ${i} : index
          vector.store ${acc}, %tile[%${p}row, %c0] : memref<${R}x${L}xf32>, vector<${L}xf32>
