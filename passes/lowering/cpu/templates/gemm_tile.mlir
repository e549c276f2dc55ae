// snippet: reads ${tile0}:index ${panel}:${panel_type} %kc:index %c0:index %c1:index %c2:index %c16:index %cKP:index %x:memref<?x${KH}x16xi32> %sums:${sums_type} %n:index %first:i1 %zero:vector<16xf32>${row_reads}${store_reads}; defines; holes rows products stores
            // 16 rows of x from ${tile0} against the panel: per pair of K (a line) one
            // vdpbf16ps a row (x [?, ${KH}, 16] pairs, sums ${sums_type}; the rows also read:${row_reads};
            // the stores:${store_reads})
            %${p}t = arith.divui ${tile0}, %c16 : index
${rows}
            %${p}kp0 = arith.divui %kc, %c2 : index
            %${p}acc:16 = scf.for %${p}p = %c0 to %cKP step %c1
                iter_args(${iter_args}) -> (${acc_types}) {
              %${p}kp = arith.addi %${p}kp0, %${p}p : index
              %${p}wl = vector.load ${panel}[${panel_at}] : ${panel_type}, vector<16xi32>
              %${p}wv = vector.bitcast %${p}wl : vector<16xi32> to vector<32xbf16>
${products}
              scf.yield ${yields} : ${acc_types}
            }
${stores}
