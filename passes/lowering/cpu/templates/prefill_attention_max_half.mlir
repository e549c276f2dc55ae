// snippet: reads ${src}:vector<${W2}xf32>; defines %${p}max${W}:vector<${W}xf32>
            // the larger of each lane pair of ${src}'s two halves (a select on ogt: x86's
            // vmaxps, no NaN handling; a NaN score still makes the row NaN, by its exp)
            %${p}max${W}_lo = "vector.extract_strided_slice"(${src}) <{offsets = [0], sizes = [${W}], strides = [1]}> : (vector<${W2}xf32>) -> vector<${W}xf32>
            %${p}max${W}_hi = "vector.extract_strided_slice"(${src}) <{offsets = [${W}], sizes = [${W}], strides = [1]}> : (vector<${W2}xf32>) -> vector<${W}xf32>
            %${p}max${W}_gt = arith.cmpf ogt, %${p}max${W}_lo, %${p}max${W}_hi : vector<${W}xf32>
            %${p}max${W} = arith.select %${p}max${W}_gt, %${p}max${W}_lo, %${p}max${W}_hi : vector<${W}xi1>, vector<${W}xf32>
