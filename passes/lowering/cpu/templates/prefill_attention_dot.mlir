// snippet: reads %qs:memref<${R}x${EP}xi32> %e:index %ktv:vector<${KL}xbf16> ${acc}:vector<${L}xf32>; defines %${p}next:vector<${L}xf32>
            // query row ${i} of the block: its scores over the tile's keys += the pair
            // q[${i}, 2e, 2e + 1] . K[keys, 2e, 2e + 1] (vdpbf16ps: 2e + 1's product added first)
            %${p}row = arith.constant ${i} : index
            %${p}pair = memref.load %qs[%${p}row, %e] : memref<${R}x${EP}xi32>
            %${p}pairs = vector.broadcast %${p}pair : i32 to vector<${L}xi32>
            %${p}qv = vector.bitcast %${p}pairs : vector<${L}xi32> to vector<${KL}xbf16>
            %${p}next = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(${acc}, %ktv, %${p}qv) : (vector<${L}xf32>, vector<${KL}xbf16>, vector<${KL}xbf16>) -> vector<${L}xf32>
