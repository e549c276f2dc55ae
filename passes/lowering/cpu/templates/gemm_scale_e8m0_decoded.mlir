// snippet: reads %sdec:memref<16x32xf32> %kq:index; defines %${p}da_f32:f32 %${p}db_f32:f32
            // the two rows' scales of the K block of ${bk} codes at %kq, in f32 (%sdec: decoded
            // as the panel's K block began)
            %${p}la = arith.constant ${ra} : index
            %${p}lb = arith.constant ${rb} : index
            %${p}cbk = arith.constant ${bk} : index
            %${p}kb = arith.divui %kq, %${p}cbk : index
            %${p}da_f32 = memref.load %sdec[%${p}la, %${p}kb] : memref<16x32xf32>
            %${p}db_f32 = memref.load %sdec[%${p}lb, %${p}kb] : memref<16x32xf32>
