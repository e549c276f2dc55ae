      // snippet: reads %w:memref<${N}x${K}xi8>; defines %w_flat:memref<${NK}xi8> %c_ahead:index %c_last:index
      // AVX2 code asks for the codes ${distance} bytes past each step's before it needs them (a
      // plain view of the rows: the bytes past a row's end are the next row's): 2048 x 5632 E4M3
      // weights past the L3 streamed at 26 GB/s without it, 30-31 with it (RESULTS.md)
      %w_flat = memref.collapse_shape %w [[0, 1]] : memref<${N}x${K}xi8> into memref<${NK}xi8>
      %c_ahead = arith.constant ${distance} : index
      %c_last = arith.constant ${last} : index
