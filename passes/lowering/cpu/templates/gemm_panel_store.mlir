// snippet: reads ${dst}:${dst_type} %line0:index %c0:index ${v}:vector<16xi32>${lead_reads}; defines
            // the line of K's pair ${line} (each of the 16 rows' pair; leading indices read:${lead_reads})
            %${p}line = arith.constant ${line} : index
            %${p}at = arith.addi %line0, %${p}line : index
            vector.store ${v}, ${dst}[${lead}%${p}at, %c0] : ${dst_type}, vector<16xi32>
