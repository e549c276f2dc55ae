// snippet: reads %tile0:index %m_last:index; defines %${p}ra:index %${p}rb:index
            // rows ${ra} and ${rb} of the tile (past M: the last row, whose outputs are not stored)
            %${p}oa = arith.constant ${ra} : index
            %${p}ob = arith.constant ${rb} : index
            %${p}ia = arith.addi %tile0, %${p}oa : index
            %${p}ib = arith.addi %tile0, %${p}ob : index
            %${p}ra = arith.minui %${p}ia, %m_last : index
            %${p}rb = arith.minui %${p}ib, %m_last : index
