// quantize (MXFP4): data = cast_e2m1(x * 2^(127 - e)) per 1x32 block with its E8M0 scale code e
// (quantize_e8m0_element.mlir: a multiplier of 1 for e = 0, codes 0 for a NaN scale), two codes
// per byte, low nibble = even element; elements past K (the last block's padding) are zeros.
// The scale codes pass through unchanged.
func.func private @${name}(%x: tensor<${M}x${K}xf32>, %scale: tensor<${M}x${Kb}xi8>)
    -> (tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>) attributes {${attrs}} {${m_defs}
  %empty = tensor.empty(${m}) : tensor<${M}x${Kh}xi8>
  %packed = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%empty : tensor<${M}x${Kh}xi8>) {
  ^bb0(%o: i8):
    %m = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c0_i = arith.constant 0 : index
    %c1_i = arith.constant 1 : index
    %c2_i = arith.constant 2 : index
    %c16_i = arith.constant 16 : index
    %k_len = arith.constant ${K} : index
    %zero_f = arith.constant 0.0 : f32
    %k0 = arith.muli %j, %c2_i : index
    %k1 = arith.addi %k0, %c1_i : index
    %in0 = arith.cmpi ult, %k0, %k_len : index
    %in1 = arith.cmpi ult, %k1, %k_len : index
    %i0 = arith.select %in0, %k0, %c0_i : index
    %i1 = arith.select %in1, %k1, %c0_i : index
    %x0_raw = tensor.extract %x[%m, %i0] : tensor<${M}x${K}xf32>
    %x1_raw = tensor.extract %x[%m, %i1] : tensor<${M}x${K}xf32>
    %x0 = arith.select %in0, %x0_raw, %zero_f : f32
    %x1 = arith.select %in1, %x1_raw, %zero_f : f32
    %blk = arith.divui %j, %c16_i : index
    %s = tensor.extract %scale[%m, %blk] : tensor<${M}x${Kb}xi8>
${element_lo}
${element_hi}
    %c15_8 = arith.constant 15 : i8
    %c4_8 = arith.constant 4 : i8
    %lo_nib = arith.andi %lo_result, %c15_8 : i8
    %hi_shift = arith.shli %hi_result, %c4_8 : i8
    %byte = arith.ori %lo_nib, %hi_shift : i8
    linalg.yield %byte : i8
  } -> tensor<${M}x${Kh}xi8>
  return %packed, %scale : tensor<${M}x${Kh}xi8>, tensor<${M}x${Kb}xi8>
}
