    // snippet: reads %${p}code:i8 ${scales}:${scale_type}; defines %${p}deq:f32; holes decode
    // dequantize one element of operand ${p}: its FP8 value times its block's scale_inv, read
    // from the GEMM-ready ${layout} layout.
${decode}
    %${p}row = linalg.index ${row_dim} : index
    %${p}kk = linalg.index ${k_dim} : index
    %${p}bk = arith.constant ${bk} : index
    %${p}br = arith.constant ${br} : index
    %${p}kb = arith.divui %${p}kk, %${p}bk : index
    %${p}rb = arith.divui %${p}row, %${p}br : index
    %${p}s = tensor.extract ${scales}[${read}] : ${scale_type}
    %${p}deq = arith.mulf %${p}val, %${p}s : f32
