// snippet: reads %tile0:index %m0:index %kc:index %n:index %c0:index %c16:index %cKC:index %cK:index %w:${w_type}; defines %${p}q0:index %${p}n:index %${p}col0:index; holes lines
            // this tile's share of the next panel's bytes of the weight (${w_type}; the next
            // K block's, or the next 16 rows' first): ${P} lines of 64 bytes prefetched into the
            // cache, the panel's line q being row q % 16's line q / 16 from the block's start
            %${p}dt = arith.subi %tile0, %m0 : index
            %${p}t = arith.divui %${p}dt, %c16 : index
            %${p}k_next = arith.addi %kc, %cKC : index
            %${p}wrap = arith.cmpi uge, %${p}k_next, %cK : index
            %${p}k = arith.select %${p}wrap, %c0, %${p}k_next : index
            %${p}n_next = arith.addi %n, %c16 : index
            %${p}n = arith.select %${p}wrap, %${p}n_next, %n : index
            %${p}p = arith.constant ${P} : index
            %${p}q0 = arith.muli %${p}t, %${p}p : index
            %${p}codes = arith.constant ${codes_per_elem} : index
            %${p}col0 = arith.divui %${p}k, %${p}codes : index
${lines}
