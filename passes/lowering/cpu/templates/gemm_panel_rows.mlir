// snippet: reads ${src}:${src_type} %${p}ra:index %${p}rb:index %k:index %sign:vector<64xi8> %hi_lo_table:vector<64xi8> %hi_hi_table:vector<64xi8> %lo_lo_table:vector<64xi8> %lo_hi_table:vector<64xi8>${scale_reads}; defines %${p}a:vector<16xi32> %${p}b:vector<16xi32>; holes lookup scale
            // two rows' 32 codes at %k as 16 pairs of bf16 values each (${values}; scales read:${scale_reads})
            %${p}ca = vector.load ${src}[%${p}ra, %k] : ${src_type}, vector<32xi8>
            %${p}cb = vector.load ${src}[%${p}rb, %k] : ${src_type}, vector<32xi8>
            %${p}codes = vector.shuffle %${p}ca, %${p}cb ${concat} : vector<32xi8>, vector<32xi8>
${lookup}
${scale}
            %${p}pairs = vector.bitcast ${values} : vector<64xbf16> to vector<32xi32>
            %${p}a = "vector.extract_strided_slice"(%${p}pairs) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xi32>) -> vector<16xi32>
            %${p}b = "vector.extract_strided_slice"(%${p}pairs) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xi32>) -> vector<16xi32>
