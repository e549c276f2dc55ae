          // snippet: reads ${cache}:memref<${BK}x${S}x${E}xf32> %bk:index %j:index %c0:index; defines %${p}row:vector<${E}xf32>
          // row %j of ${cache} (f32)
          %${p}row = vector.load ${cache}[%bk, %j, %c0] : memref<${BK}x${S}x${E}xf32>, vector<${E}xf32>
