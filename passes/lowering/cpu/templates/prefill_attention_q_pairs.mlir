// snippet: reads %q:memref<?x${E}xbf16> %qs:memref<${R}x${EP}xi32> %row:index %i:index %c0:index; defines %q_row:vector<${E}xbf16> %q_pairs:vector<${EP}xi32>
        // the row's bf16 values as ${EP} pairs (one i32 each: vdpbf16ps's broadcast operand)
        %q_row = vector.load %q[%row, %c0] : memref<?x${E}xbf16>, vector<${E}xbf16>
        %q_pairs = vector.bitcast %q_row : vector<${E}xbf16> to vector<${EP}xi32>
        vector.store %q_pairs, %qs[%i, %c0] : memref<${R}x${EP}xi32>, vector<${EP}xi32>
