// snippet: reads %s_binding:!stream.binding %c0:index %m:index; defines %s_rows:index %scales:${scales_type}
      // block scales (${doc}), read as the panels are decoded (rows: ${rows_map})
      %s_rows = affine.apply affine_map<()[s0] -> (${rows_map})>()[%m]
      %scales = stream.binding.subspan %s_binding[%c0] : !stream.binding -> ${scales_type}${dims}
