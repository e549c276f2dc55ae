// snippet: reads %${p}codes:vector<64xi8> %sign:vector<64xi8> %hi_lo_table:vector<64xi8> %hi_hi_table:vector<64xi8> %lo_lo_table:vector<64xi8> %lo_hi_table:vector<64xi8>; defines %${p}values:vector<64xbf16>
            // 64 FP8 codes' bf16 values: the high and the low byte of each magnitude's from the
            // byte tables (vpermi2b), the sign bit or-ed in
            %${p}hi_mag = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%hi_lo_table, %${p}codes, %hi_hi_table) : (vector<64xi8>, vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}lo = llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"(%lo_lo_table, %${p}codes, %lo_hi_table) : (vector<64xi8>, vector<64xi8>, vector<64xi8>) -> vector<64xi8>
            %${p}sign = arith.andi %${p}codes, %sign : vector<64xi8>
            %${p}hi = arith.ori %${p}hi_mag, %${p}sign : vector<64xi8>
            %${p}bytes = vector.shuffle %${p}lo, %${p}hi ${interleave} : vector<64xi8>, vector<64xi8>
            %${p}values = vector.bitcast %${p}bytes : vector<128xi8> to vector<64xbf16>
