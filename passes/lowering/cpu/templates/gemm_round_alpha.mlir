// snippet: reads %sa_binding:!stream.binding %sb_binding:!stream.binding %c0:index; defines %alpha:vector<16xf32> %sa_ref:memref<f32> %sb_ref:memref<f32> %sa_value:f32 %sb_value:f32 %alpha_value:f32
      // ${doc}: the sums times (sa * sb) before they are rounded, as the data-tiled GEMM's
      // epilogue multiplies them
      %sa_ref = stream.binding.subspan %sa_binding[%c0] : !stream.binding -> memref<f32>
      %sb_ref = stream.binding.subspan %sb_binding[%c0] : !stream.binding -> memref<f32>
      %sa_value = memref.load %sa_ref[] : memref<f32>
      %sb_value = memref.load %sb_ref[] : memref<f32>
      %alpha_value = arith.mulf %sa_value, %sb_value : f32
      %alpha = vector.broadcast %alpha_value : f32 to vector<16xf32>
