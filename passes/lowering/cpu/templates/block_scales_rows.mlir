  // snippet: reads ${scales}:${scale_type}; defines %${p}row_scales:${grid_type}
  // the block1d scales of operand ${p}'s ${rows} rows: the quantize pads their rows to a multiple
  // of 4 (cuBLAS's layout); the decode's view reads exactly one per row and K block
  %${p}row_scales = tensor.extract_slice ${scales}[0, 0] [${kb}, ${rows}] [1, 1] : ${scale_type} to ${grid_type}
