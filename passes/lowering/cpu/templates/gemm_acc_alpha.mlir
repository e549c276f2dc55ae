// snippet: reads ${acc}:vector<16xf32> %alpha:vector<16xf32>; defines %${p}scaled:vector<16xf32>
              %${p}scaled = arith.mulf ${acc}, %alpha : vector<16xf32>
