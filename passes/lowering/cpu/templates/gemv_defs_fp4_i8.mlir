      // snippet: reads %xo_binding:!stream.binding %c0:index; defines %xo:memref<${LANES}xi32> %c4:index %fp4_nibble:vector<32xi8> %fp4_four:vector<32xi8> %fp4_table:vector<32xi8> %fp4_ones:vector<16xi16>
      // AVX2's E2M1 products in integers (gemv_fp4_decode_i8.mlir): x's offsets (12 times the
      // sum of each 4 bytes' x integers), a nibble's mask and shift, the table of each code's
      // value times 2 plus 12 (both 128-bit halves: vpshufb looks up within each), 16-bit ones
      %xo = stream.binding.subspan %xo_binding[%c0] : !stream.binding -> memref<${LANES}xi32>
      %c4 = arith.constant 4 : index
      %fp4_nibble = arith.constant dense<15> : vector<32xi8>
      %fp4_four = arith.constant dense<4> : vector<32xi8>
      %fp4_table = arith.constant dense<${table}> : vector<32xi8>
      %fp4_ones = arith.constant dense<1> : vector<16xi16>
