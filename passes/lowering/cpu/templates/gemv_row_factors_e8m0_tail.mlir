        // snippet: reads %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}xi8> %factors:memref<${KB}xf32> %n:index %${p}c_vec:index; defines %${p}c1:index %${p}c_kb:index; locals %${p}tail_kb %${p}tail_code %${p}tail_x %${p}tail_t; holes decode
        // the row's K blocks ${KB_VEC} to ${KB} one at a time (past the last 8 of the vector loop)
        %${p}c1 = arith.constant 1 : index
        %${p}c_kb = arith.constant ${KB} : index
        scf.for %${p}tail_kb = %${p}c_vec to %${p}c_kb step %${p}c1 {
          %${p}tail_code = memref.load %ws[%n, %${p}tail_kb] : memref<${RB}x${WKB}xi8>
${decode}
          %${p}tail_x = memref.load %xs[%${p}tail_kb] : memref<${KB}xf32>
          %${p}tail_t = arith.mulf %${p}tail_x, %${p}d_f32 : f32
          memref.store %${p}tail_t, %factors[%${p}tail_kb] : memref<${KB}xf32>
        }
