          // snippet: reads %ws:memref<${RB}x${WKB}xf32> %nb:index %${p}kb_a:index %${p}kb_b:index; defines %${p}swa_f32:f32 %${p}swb_f32:f32
          // the row's fp32 scales of the two K blocks (its row block's: %nb)
          %${p}swa_f32 = memref.load %ws[%nb, %${p}kb_a] : memref<${RB}x${WKB}xf32>
          %${p}swb_f32 = memref.load %ws[%nb, %${p}kb_b] : memref<${RB}x${WKB}xf32>
