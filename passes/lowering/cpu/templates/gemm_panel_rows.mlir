// snippet: reads ${src}:${src_type} %${p}ra:index %${p}rb:index ${col}:index${table_reads}${scale_reads}; defines %${p}a:vector<16xi32> %${p}b:vector<16xi32>; holes lookup scale
            // two rows' 32 codes at %k (${width} bytes each at ${col}) as 16 pairs of bf16 values
            // each (${values}; the lookup's tables:${table_reads}; scales read:${scale_reads})
            %${p}ca = vector.load ${src}[%${p}ra, ${col}] : ${src_type}, vector<${width}xi8>
            %${p}cb = vector.load ${src}[%${p}rb, ${col}] : ${src_type}, vector<${width}xi8>
            %${p}both = vector.shuffle %${p}ca, %${p}cb ${concat} : vector<${width}xi8>, vector<${width}xi8>
            %${p}codes = vector.shuffle %${p}both, %${p}both ${widen} : vector<${both}xi8>, vector<${both}xi8>
${lookup}
${scale}
            %${p}pairs = vector.bitcast ${values} : vector<64xbf16> to vector<32xi32>
            %${p}a = "vector.extract_strided_slice"(%${p}pairs) <{offsets = [0], sizes = [16], strides = [1]}> : (vector<32xi32>) -> vector<16xi32>
            %${p}b = "vector.extract_strided_slice"(%${p}pairs) <{offsets = [16], sizes = [16], strides = [1]}> : (vector<32xi32>) -> vector<16xi32>
