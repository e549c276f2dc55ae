    // snippet: reads ${data}:${data_type} %${p}S:tensor<${rows}x${cols}xi8>; defines %${p}deq:f32; holes decode_fp4 decode
    // dequantize one element of operand ${p}: its E2M1 nibble (low nibble = even element)
    // times its block's E4M3 decode scale read from the swizzled layout; exact in f32.
    %${p}row = linalg.index ${row_dim} : index
    %${p}kk = linalg.index ${k_dim} : index
    %${p}c2 = arith.constant 2 : index
    %${p}c16 = arith.constant 16 : index
    %${p}byte_i = arith.divui %${p}kk, %${p}c2 : index
    %${p}odd = arith.remui %${p}kk, %${p}c2 : index
    %${p}packed = tensor.extract ${data}[%${p}row, %${p}byte_i] : ${data_type}
    %${p}b32 = arith.extui %${p}packed : i8 to i32
    %${p}odd32 = arith.index_cast %${p}odd : index to i32
    %${p}c4 = arith.constant 4 : i32
    %${p}shift = arith.muli %${p}odd32, %${p}c4 : i32
    %${p}nib_sh = arith.shrui %${p}b32, %${p}shift : i32
    %${p}c15 = arith.constant 15 : i32
    %${p}nib = arith.andi %${p}nib_sh, %${p}c15 : i32
${decode_fp4}
    %${p}bk = arith.divui %${p}kk, %${p}c16 : index
    %${p}s_code = tensor.extract %${p}S[%${p}row, %${p}bk] : tensor<${rows}x${cols}xi8>
${decode}
    %${p}deq = arith.mulf %${p}fp4, %${p}s_val : f32
