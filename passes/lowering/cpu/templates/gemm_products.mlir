// snippet: reads %x:memref<?x${KH}x16xi32> ${t}:index ${kp}:index ${wv}:vector<32xbf16> ${acc}:vector<16xf32>; defines %${p}next:vector<16xf32>
              // row ${i} of the tile: its pair of x at the line's K broadcast (vdpbf16ps's memory
              // operand) times the line, into its accumulator
              %${p}lane = arith.constant ${i} : index
              %${p}pair = memref.load %x[${t}, ${kp}, %${p}lane] : memref<?x${KH}x16xi32>
              %${p}pairs = vector.broadcast %${p}pair : i32 to vector<16xi32>
              %${p}xv = vector.bitcast %${p}pairs : vector<16xi32> to vector<32xbf16>
              %${p}next = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc}, ${wv}, %${p}xv) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
