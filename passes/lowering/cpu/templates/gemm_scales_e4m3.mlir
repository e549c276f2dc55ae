// snippet: reads %${p}codes:vector<64xi8>${table_reads}; defines %${p}wide:vector<64xf32>; holes lookup
            // 64 E4M3 scale codes' values by the FP8 codes' lookup (each code's bf16 value,
            // exact; the tables:${table_reads}), widened to f32 (exact)
${lookup}
            %${p}wide = arith.extf %${p}values : vector<64xbf16> to vector<64xf32>
