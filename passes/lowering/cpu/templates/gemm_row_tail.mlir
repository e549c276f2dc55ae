// snippet: reads ${tile0}:index %m:index %m_last:index %sums:${sums_type}${sums_reads} %first:i1 %zero:vector<16xf32>; defines %${p}row:index %${p}in:i1 %${p}init:vector<16xf32>
            // row ${i} of the last tile: its index (the last row past M), whether it is stored,
            // and its sums so far (zero at the first K block; read:${sums_reads})
            %${p}off = arith.constant ${i} : index
            %${p}all = arith.addi ${tile0}, %${p}off : index
            %${p}row = arith.minui %${p}all, %m_last : index
            %${p}in = arith.cmpi ult, %${p}all, %m : index
            %${p}old = vector.load %sums[${sums_at}] : ${sums_type}, vector<16xf32>
            %${p}init = arith.select %first, %zero, %${p}old : vector<16xf32>
