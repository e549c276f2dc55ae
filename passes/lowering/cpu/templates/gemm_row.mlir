// snippet: reads ${tile0}:index %out:memref<?x${N}xf32> %n:index %first:i1 %zero:vector<16xf32>; defines %${p}row:index %${p}init:vector<16xf32>
            // row ${i} of a whole tile, and its outputs so far (zero at the first K block)
            %${p}off = arith.constant ${i} : index
            %${p}row = arith.addi ${tile0}, %${p}off : index
            %${p}old = vector.load %out[%${p}row, %n] : memref<?x${N}xf32>, vector<16xf32>
            %${p}init = arith.select %first, %zero, %${p}old : vector<16xf32>
