      // snippet: reads %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}xf32> %factors:memref<${KB}xf32> %row0:index %c_rb:index %c0:index %c1:index; defines %nb0:index %c_kb:index; locals %fkb %f_x %f_w %f_t
      // fp8-block: the workgroup's rows lie in one row block of 128 (its rows, a power of two up
      // to 16, divide 128), so each K block's factor, x's scale (times 2^8) times the row
      // block's, is made once for them all: the product the loop took each step before
      // (exact: powers of two; FTZ, as the loop's)
      %nb0 = arith.divui %row0, %c_rb : index
      %c_kb = arith.constant ${KB} : index
      scf.for %fkb = %c0 to %c_kb step %c1 {
        %f_x = memref.load %xs[%fkb] : memref<${KB}xf32>
        %f_w = memref.load %ws[%nb0, %fkb] : memref<${RB}x${WKB}xf32>
        %f_t = arith.mulf %f_x, %f_w : f32
        memref.store %f_t, %factors[%fkb] : memref<${KB}xf32>
      }
