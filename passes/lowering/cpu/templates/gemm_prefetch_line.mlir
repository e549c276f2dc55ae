// snippet: reads ${q0}:index ${n}:index ${col0}:index %c16:index %w:${w_type}; defines
            // line ${i} of this tile's share (at most row ${row_last}, column ${col_last})
            %${p}i = arith.constant ${i} : index
            %${p}q = arith.addi ${q0}, %${p}i : index
            %${p}r = arith.remui %${p}q, %c16 : index
            %${p}c = arith.divui %${p}q, %c16 : index
            %${p}row_any = arith.addi ${n}, %${p}r : index
            %${p}row_last = arith.constant ${row_last} : index
            %${p}row = arith.minui %${p}row_any, %${p}row_last : index
            %${p}line = arith.constant ${line_elems} : index
            %${p}dc = arith.muli %${p}c, %${p}line : index
            %${p}col_any = arith.addi ${col0}, %${p}dc : index
            %${p}col_last = arith.constant ${col_last} : index
            %${p}col = arith.minui %${p}col_any, %${p}col_last : index
            memref.prefetch %w[%${p}row, %${p}col], read, locality<3>, data : ${w_type}
