    // snippet: reads ${scales}:${scale_type}; defines %${p}s:${scale_elem}
    // the block scale (${scale_elem}) of this element of operand ${p}, read by its index from the ${layout}
    // layout (the form for any shape; IREE cannot tile a floordiv indexing map, so it is a
    // gather per element: block_decode_view.mlir is the fast form where K is whole blocks)
    %${p}row = linalg.index ${row_dim} : index
    %${p}kk = linalg.index ${k_dim} : index
    %${p}bk = arith.constant ${bk} : index
    %${p}br = arith.constant ${br} : index
    %${p}kb = arith.divui %${p}kk, %${p}bk : index
    %${p}rb = arith.divui %${p}row, %${p}br : index
    %${p}s = tensor.extract ${scales}[${read}] : ${scale_type}
