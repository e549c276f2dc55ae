      // snippet: reads %xs_binding:!stream.binding %ws_binding:!stream.binding %c0:index; defines %xs:memref<${KB}xf32> %ws:memref<${RB}x${WKB}x${ws_elem}> %c_bk:index %c_rb:index
      // block scales: x's [K blocks] in f32 and the rows' [row blocks, K blocks] (${ws_elem}); a row's
      // scales at row block n / ${rb}
      %xs = stream.binding.subspan %xs_binding[%c0] : !stream.binding -> memref<${KB}xf32>
      %ws = stream.binding.subspan %ws_binding[%c0] : !stream.binding -> memref<${RB}x${WKB}x${ws_elem}>
      %c_bk = arith.constant ${bk} : index
      %c_rb = arith.constant ${rb} : index
