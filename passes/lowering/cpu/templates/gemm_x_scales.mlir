// snippet: reads %sa:${sa_type} %m:index; defines %sa_any:${sa_any_type} %s_rows:index
  // A's block scales as the tiling executable reads them (rows: ${rows_map})
  %s_rows = affine.apply affine_map<()[s0] -> (${rows_map})>()[%m]
  %sa_any = tensor.cast %sa : ${sa_type} to ${sa_any_type}
