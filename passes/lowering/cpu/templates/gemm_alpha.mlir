// snippet: reads %sa_binding:!stream.binding %sb_binding:!stream.binding %c0:index; defines %sa:memref<f32> %sb:memref<f32> %sa_val:f32 %sb_val:f32 %alpha:f32
      // per-tensor (nvfp4: global) scales: the sums times their product, at the last K block
      %sa = stream.binding.subspan %sa_binding[%c0] : !stream.binding -> memref<f32>
      %sb = stream.binding.subspan %sb_binding[%c0] : !stream.binding -> memref<f32>
      %sa_val = memref.load %sa[] : memref<f32>
      %sb_val = memref.load %sb[] : memref<f32>
      %alpha = arith.mulf %sa_val, %sb_val : f32
