          // snippet: reads %w_flat:memref<${NK}xi8> %n:index %k:index %cK:index %c_ahead:index %c_last:index; defines %ahead_row:index %ahead_here:index %ahead_far:index %ahead:index
          // one cache line of codes %c_ahead bytes past this step's, asked of the memory
          %ahead_row = arith.muli %n, %cK : index
          %ahead_here = arith.addi %ahead_row, %k : index
          %ahead_far = arith.addi %ahead_here, %c_ahead : index
          %ahead = arith.minui %ahead_far, %c_last : index
          memref.prefetch %w_flat[%ahead], read, locality<0>, data : memref<${NK}xi8>
