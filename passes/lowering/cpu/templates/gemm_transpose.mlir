// snippet: reads ${a}:vector<16xi32> ${b}:vector<16xi32>; defines ${lo}:vector<16xi32> ${hi}:vector<16xi32>
            ${lo} = vector.shuffle ${a}, ${b} ${lo_mask} : vector<16xi32>, vector<16xi32>
            ${hi} = vector.shuffle ${a}, ${b} ${hi_mask} : vector<16xi32>, vector<16xi32>
