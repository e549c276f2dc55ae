          // snippet: reads ${cache}:memref<${BK}x${S}x${E}xbf16> %bk:index %j:index %c0:index %shift16:vector<${E}xi32>; defines %${p}row:vector<${E}xf32>
          // row %j of ${cache} (bf16, as stored) widened exactly: each value's bits into an
          // f32's high half
          %${p}raw = vector.load ${cache}[%bk, %j, %c0] : memref<${BK}x${S}x${E}xbf16>, vector<${E}xbf16>
          %${p}bits = arith.bitcast %${p}raw : vector<${E}xbf16> to vector<${E}xi16>
          %${p}wide = arith.extui %${p}bits : vector<${E}xi16> to vector<${E}xi32>
          %${p}high = arith.shli %${p}wide, %shift16 : vector<${E}xi32>
          %${p}row = arith.bitcast %${p}high : vector<${E}xi32> to vector<${E}xf32>
