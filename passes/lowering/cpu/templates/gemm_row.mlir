// snippet: reads ${tile0}:index %sums:${sums_type}${sums_reads} %first:i1 %zero:vector<16xf32>; defines %${p}row:index %${p}init:vector<16xf32>
            // row ${i} of a whole tile, and its sums so far (zero at the first K block; read:${sums_reads})
            %${p}off = arith.constant ${i} : index
            %${p}row = arith.addi ${tile0}, %${p}off : index
            %${p}old = vector.load %sums[${sums_at}] : ${sums_type}, vector<16xf32>
            %${p}init = arith.select %first, %zero, %${p}old : vector<16xf32>
