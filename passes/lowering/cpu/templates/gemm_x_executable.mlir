// A many-row GEMM's activation (passes/lowering/cpu/gemm.py): a [M, ${K}] (M, %m, an operand),
// ${a_doc}, tiled as the GEMM reads them, [ceil(M / 16), ${KH}, 16] pairs of values (32-bit
// words): per 16 rows, each pair of K's 16 pairs together (rows past M repeat the last; their
// outputs are not stored). Each workgroup takes one tile of 16 rows, ${KC} of K at a time (its
// block scales decoded as each such block begins, where they are E4M3 or E8M0), 32 of those at
// a time: two rows a step, the 16 rows' pairs transposed in registers.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%m: index) -> (index, index, index) {
    %groups = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%m]
    %c1 = arith.constant 1 : index
    stream.return %groups, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%a_binding: !stream.binding, ${scale_bindings}%x_binding: !stream.binding,
                     %m: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %cK = arith.constant ${K} : index
      %cKC = arith.constant ${KC} : index
      %tiles = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%m]
      %a = stream.binding.subspan %a_binding[%c0] : !stream.binding -> memref<?x${AK}x${a_elem}>{%m}
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<?x${KH}x16xi32>{%tiles}${scale_defs}
${decode_defs}
      %t = hal.interface.workgroup.id[0] : index
      %tile0 = arith.muli %t, %c16 : index
      %m_last = arith.subi %m, %c1 : index
      scf.for %kc = %c0 to %cK step %cKC {
${panel_scales}
        scf.for %kq = %c0 to %cKC step %c32 {
          %k = arith.addi %kc, %kq : index
          %kh = arith.divui %k, %c2 : index
          %line0 = arith.divui %k, %c2 : index
${panel}
        }
      }
      return
    }
  }
}
