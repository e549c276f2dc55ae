      // snippet: reads %xs_binding:!stream.binding %ws_binding:!stream.binding %c0:index; defines %xs:memref<${KB}xf32> %ws:memref<${N}x${KB}xi8> %c8:index %c_odd:index %magnitude:vector<8xi16> %seven:vector<8xi16> %scale_nan:vector<8xi16> %p8:vector<8xf32> %nan8:vector<8xf32>
      // nvfp4: x's block scales in f32, the rows' as E4M3 codes [N, K blocks of 16] (decoded
      // through f16: gemv_fp4_scales.mlir); x's odd elements from ${K} on
      %xs = stream.binding.subspan %xs_binding[%c0] : !stream.binding -> memref<${KB}xf32>
      %ws = stream.binding.subspan %ws_binding[%c0] : !stream.binding -> memref<${N}x${KB}xi8>
      %c8 = arith.constant 8 : index
      %c_odd = arith.constant ${K} : index
      %magnitude = arith.constant dense<127> : vector<8xi16>
      %seven = arith.constant dense<7> : vector<8xi16>
      %scale_nan = arith.constant dense<127> : vector<8xi16>
      %p8 = arith.constant dense<256.0> : vector<8xf32>
      %nan8 = arith.constant dense<0x7FC00000> : vector<8xf32>
