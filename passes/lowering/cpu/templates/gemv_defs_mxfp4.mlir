      // snippet: reads %xs_binding:!stream.binding %ws_binding:!stream.binding %c0:index; defines %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %c8:index %c16:index %c_odd:index %e8m0_shift:vector<4xi32> %e8m0_nan:vector<4xi32> %nan4:vector<4xf32>
      // mxfp4: x's block scales in f32, the rows' as E8M0 codes [N, K blocks of 32] (decoded in
      // the loop: gemv_mxfp4_scales_i8.mlir); x's odd elements from ${K} on
      %xs = stream.binding.subspan %xs_binding[%c0] : !stream.binding -> memref<${KB}xf32>
      %ws = stream.binding.subspan %ws_binding[%c0] : !stream.binding -> memref<${N}x${KB}xi8>
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c_odd = arith.constant ${K} : index
      %e8m0_shift = arith.constant dense<23> : vector<4xi32>
      %e8m0_nan = arith.constant dense<255> : vector<4xi32>
      %nan4 = arith.constant dense<0x7FC00000> : vector<4xf32>
