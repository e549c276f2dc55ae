// snippet: reads %sdec:memref<16x32xf32> %kq:index; defines %${p}a0_val:f32 %${p}a1_val:f32 %${p}b0_val:f32 %${p}b1_val:f32
            // the two rows' scales of the two blocks of 16 codes from %kq in the K block, in f32
            // (%sdec: decoded as the panel's K block began)
            %${p}la = arith.constant ${ra} : index
            %${p}lb = arith.constant ${rb} : index
            %${p}c16 = arith.constant 16 : index
            %${p}one = arith.constant 1 : index
            %${p}kb0 = arith.divui %kq, %${p}c16 : index
            %${p}kb1 = arith.addi %${p}kb0, %${p}one : index
            %${p}a0_val = memref.load %sdec[%${p}la, %${p}kb0] : memref<16x32xf32>
            %${p}a1_val = memref.load %sdec[%${p}la, %${p}kb1] : memref<16x32xf32>
            %${p}b0_val = memref.load %sdec[%${p}lb, %${p}kb0] : memref<16x32xf32>
            %${p}b1_val = memref.load %sdec[%${p}lb, %${p}kb1] : memref<16x32xf32>
