          // snippet: reads %ws:memref<${RB}x${WKB}xi8> %nb:index %${p}kb_a:index %${p}kb_b:index; defines %${p}swc_a:i8 %${p}swc_b:i8; holes decode_a decode_b
          // the row's E8M0 scale codes of the two K blocks, decoded to %${p}swa_f32, %${p}swb_f32
          // (decode_e8m0_f32.mlir: read as stored, [N, K blocks], no f32 copy of them)
          %${p}swc_a = memref.load %ws[%nb, %${p}kb_a] : memref<${RB}x${WKB}xi8>
          %${p}swc_b = memref.load %ws[%nb, %${p}kb_b] : memref<${RB}x${WKB}xi8>
${decode_a}
${decode_b}
