    // snippet: reads ${data}:${data_type} %${p}S:tensor<${rows}x${cols}xi8>; defines %${p}deq:f32; holes decode_fp4 ldexp
    // dequantize one element of operand ${p}: its E2M1 nibble (low nibble = even element)
    // times 2^(e - 127) of its block's E8M0 scale e, read from the compact scales (exact, on
    // bits); a NaN scale (0xFF) gives NaN.
    %${p}row = linalg.index ${row_dim} : index
    %${p}kk = linalg.index ${k_dim} : index
    %${p}c2 = arith.constant 2 : index
    %${p}c32 = arith.constant 32 : index
    %${p}byte_i = arith.divui %${p}kk, %${p}c2 : index
    %${p}odd = arith.remui %${p}kk, %${p}c2 : index
    %${p}packed = tensor.extract ${data}[%${p}row, %${p}byte_i] : ${data_type}
    %${p}b32 = arith.extui %${p}packed : i8 to i32
    %${p}odd32 = arith.index_cast %${p}odd : index to i32
    %${p}c4 = arith.constant 4 : i32
    %${p}shift4 = arith.muli %${p}odd32, %${p}c4 : i32
    %${p}nib_sh = arith.shrui %${p}b32, %${p}shift4 : i32
    %${p}c15 = arith.constant 15 : i32
    %${p}nib = arith.andi %${p}nib_sh, %${p}c15 : i32
${decode_fp4}
    %${p}bk = arith.divui %${p}kk, %${p}c32 : index
    %${p}s_code = tensor.extract %${p}S[%${p}row, %${p}bk] : tensor<${rows}x${cols}xi8>
    %${p}se = arith.extui %${p}s_code : i8 to i32
    %${p}c127 = arith.constant 127 : i32
    %${p}c255 = arith.constant 255 : i32
    %${p}shift = arith.subi %${p}se, %${p}c127 : i32
${ldexp}
    %${p}nan_s = arith.constant 0x7FC00000 : f32
    %${p}scale_nan = arith.cmpi eq, %${p}se, %${p}c255 : i32
    %${p}deq = arith.select %${p}scale_nan, %${p}nan_s, %${p}l_out : f32
