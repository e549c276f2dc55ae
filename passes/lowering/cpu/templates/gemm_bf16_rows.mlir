// snippet: reads ${src}:${src_type} %${p}ra:index %${p}rb:index %k:index; defines %${p}a:vector<16xi32> %${p}b:vector<16xi32>
            // two rows' 32 bf16 values at %k as stored, 16 pairs each (32-bit words)
            %${p}va = vector.load ${src}[%${p}ra, %k] : ${src_type}, vector<32xbf16>
            %${p}vb = vector.load ${src}[%${p}rb, %k] : ${src_type}, vector<32xbf16>
            %${p}a = vector.bitcast %${p}va : vector<32xbf16> to vector<16xi32>
            %${p}b = vector.bitcast %${p}vb : vector<32xbf16> to vector<16xi32>
