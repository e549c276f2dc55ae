      // snippet: reads %xs_binding:!stream.binding %ws_binding:!stream.binding %c0:index; defines %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}xf32> %c_bk:index %c_rb:index
      // block scales: x's [K blocks] and the rows' [row blocks, K blocks], in f32; a row's
      // scales at row block n / ${rb}
      %xs = stream.binding.subspan %xs_binding[%c0] : !stream.binding -> memref<${KB}xf32>
      %ws = stream.binding.subspan %ws_binding[%c0] : !stream.binding -> memref<${RB}x${WKB}xf32>
      %c_bk = arith.constant ${bk} : index
      %c_rb = arith.constant ${rb} : index
