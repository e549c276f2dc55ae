          // snippet: reads %w:${w_type} %s:${s_type} %panel:memref<${KCQ}x32xi8> %pscale:memref<${KCB}x8xf32> %n:index %kb0:index %kcb:index %c0:index %c1:index %c4:index %c8:index %scale_table:memref<256xi32>; defines
          // the panel of B's 8 rows from %n over the K block's steps, from B's codes as stored:
          // each step's 16 codes (8 bytes) split into nibbles (the even code low, the odd high),
          // each looked up as its value times 2 plus 12 (vpshufb) and stored as 4 bytes into each
          // of 4 lines (the row's lane); each step's block scale decoded${w_doc} by a table
          // of the 256 codes' f32 bits (%pscale)
          %${p}table = arith.constant dense<[${table}]> : vector<16xi8>
          %${p}low = arith.constant dense<15> : vector<8xi8>
          %${p}four = arith.constant dense<4> : vector<8xi8>
          %${p}c2 = arith.constant 2 : index
          %${p}c3 = arith.constant 3 : index
          %${p}cR = arith.constant ${R} : index
          scf.for %${p}r = %c0 to %c8 step %c1 {
            %${p}row = arith.addi %n, %${p}r : index
            %${p}lane = arith.muli %${p}r, %c4 : index
            scf.for %${p}bl = %c0 to %kcb step %c1 {
              %${p}b = arith.addi %kb0, %${p}bl : index
              %${p}byte0 = arith.muli %${p}b, %c8 : index
              %${p}raw = vector.load %w[%${p}row, %${p}byte0] : ${w_type}, vector<8xi8>
              %${p}lo = arith.andi %${p}raw, %${p}low : vector<8xi8>
              %${p}hi = arith.shrui %${p}raw, %${p}four : vector<8xi8>
              %${p}codes = vector.shuffle %${p}lo, %${p}hi [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15] : vector<8xi8>, vector<8xi8>
              %${p}vals = llvm.call_intrinsic "llvm.x86.ssse3.pshuf.b.128"(%${p}table, %${p}codes) : (vector<16xi8>, vector<16xi8>) -> vector<16xi8>
              %${p}q0 = arith.muli %${p}bl, %c4 : index
              %${p}q1 = arith.addi %${p}q0, %c1 : index
              %${p}q2 = arith.addi %${p}q0, %${p}c2 : index
              %${p}q3 = arith.addi %${p}q0, %${p}c3 : index
              %${p}v0 = "vector.extract_strided_slice"(%${p}vals) <{offsets = [0], sizes = [4], strides = [1]}> : (vector<16xi8>) -> vector<4xi8>
              %${p}v1 = "vector.extract_strided_slice"(%${p}vals) <{offsets = [4], sizes = [4], strides = [1]}> : (vector<16xi8>) -> vector<4xi8>
              %${p}v2 = "vector.extract_strided_slice"(%${p}vals) <{offsets = [8], sizes = [4], strides = [1]}> : (vector<16xi8>) -> vector<4xi8>
              %${p}v3 = "vector.extract_strided_slice"(%${p}vals) <{offsets = [12], sizes = [4], strides = [1]}> : (vector<16xi8>) -> vector<4xi8>
              vector.store %${p}v0, %panel[%${p}q0, %${p}lane] : memref<${KCQ}x32xi8>, vector<4xi8>
              vector.store %${p}v1, %panel[%${p}q1, %${p}lane] : memref<${KCQ}x32xi8>, vector<4xi8>
              vector.store %${p}v2, %panel[%${p}q2, %${p}lane] : memref<${KCQ}x32xi8>, vector<4xi8>
              vector.store %${p}v3, %panel[%${p}q3, %${p}lane] : memref<${KCQ}x32xi8>, vector<4xi8>
              %${p}sb = arith.divui %${p}b, %${p}cR : index
              %${p}code = memref.load %s[%${p}row, %${p}sb] : ${s_type}
              %${p}code32 = arith.extui %${p}code : i8 to i32
              %${p}entry = arith.index_cast %${p}code32 : i32 to index
              %${p}bits = memref.load %scale_table[%${p}entry] : memref<256xi32>
              %${p}scale = arith.bitcast %${p}bits : i32 to f32
              memref.store %${p}scale, %pscale[%${p}bl, %${p}r] : memref<${KCB}x8xf32>
            }
          }
