// snippet: reads %q:memref<?x${E}xf32> %qs:memref<${R}x${E}xf32> %row:index %i:index %c0:index; defines %q_row:vector<${E}xf32>
        %q_row = vector.load %q[%row, %c0] : memref<?x${E}xf32>, vector<${E}xf32>
        vector.store %q_row, %qs[%i, %c0] : memref<${R}x${E}xf32>, vector<${E}xf32>
