// snippet: reads %${p}codes:vector<64xi8> %nibble:vector<64xi8> %four:vector<64xi8> %hi_table:vector<64xi8> %lo_table:vector<64xi8>; defines %${p}values:vector<64xbf16>
            // 32 bytes of E2M1 codes (two rows' 16, the even element in each low nibble; the
            // upper 32 bytes unused) as 64 bf16 values in K order: each nibble's value's high and
            // low byte from the 16-entry tables (vpermb, the sign included), even and odd
            // elements interleaved
            %${p}even = arith.andi %${p}codes, %nibble : vector<64xi8>
            %${p}high = arith.shrui %${p}codes, %four : vector<64xi8>
            %${p}odd = arith.andi %${p}high, %nibble : vector<64xi8>
            %${p}even_hi = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%hi_table, %${p}even) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}even_lo = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%lo_table, %${p}even) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}odd_hi = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%hi_table, %${p}odd) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}odd_lo = llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"(%lo_table, %${p}odd) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}even_bytes = vector.shuffle %${p}even_lo, %${p}even_hi ${interleave} : vector<64xi8>, vector<64xi8>
            %${p}odd_bytes = vector.shuffle %${p}odd_lo, %${p}odd_hi ${interleave} : vector<64xi8>, vector<64xi8>
            %${p}even_words = vector.bitcast %${p}even_bytes : vector<64xi8> to vector<32xi16>
            %${p}odd_words = vector.bitcast %${p}odd_bytes : vector<64xi8> to vector<32xi16>
            %${p}words = vector.shuffle %${p}even_words, %${p}odd_words ${pairs} : vector<32xi16>, vector<32xi16>
            %${p}values = vector.bitcast %${p}words : vector<64xi16> to vector<64xbf16>
