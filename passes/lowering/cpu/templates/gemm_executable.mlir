// The GEMM of many rows of x (a prefill, a batch; passes/lowering/cpu/gemm.py): acc[m, n] =
// sum_k x[m, k] * w[n, k] for x [M, ${K}] bf16 (${x_doc}, tiled [ceil(M / 16), ${KH}, 16] pairs
// of values: 32-bit words; M, %m, an operand) and w [${N}, ${K}] ${w_doc}${epilogue_doc}.
// Each workgroup takes ${MB} rows of x and ${NB} rows of w, 16 rows of w at a time, K ${KC} at a
// time:
//   1. ${panel_step}
//   2. for each 16 rows of x (a last tile of fewer: rows past M repeat the last and are not
//      stored; gemm_tile.mlir): 16 accumulators of 16 lanes, one per row (lane: the row of w),
//      from the sums so far (zero at the first K block), and per pair of K each row's pair of
//      x multiplied with the panel's line (vdpbf16ps, the pair broadcast as its memory
//      operand: products exact in f32, each factor a bf16; f32 sums, K in order, denormals as
//      zero as every CPU dispatch of IREE's); stored back into sums, [ceil(M / 16), ${N} / 16,
//      16, 16] (a tile's 16 x 16 block of a strip contiguous: rows ${N} x 4 bytes apart would
//      take lines of one cache set), and at the last block of K into out, [M, ${N}]
//      ${out_elem}${round_doc}. Each whole tile first prefetches its share of the next panel's
//      weight bytes (gemm_prefetch.mlir), which step 1 then reads from the cache rather than
//      from memory.
// Needs ${needs}.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%m: index) -> (index, index, index) {
    %groups = affine.apply affine_map<()[s0] -> ((s0 ceildiv ${MB}) * ${NG})>()[%m]
    %c1 = arith.constant 1 : index
    stream.return %groups, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%x_binding: !stream.binding, %w_binding: !stream.binding,
                     ${scale_bindings}${alpha_bindings}%sums_binding: !stream.binding,
                     %out_binding: !stream.binding, %m: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %cK = arith.constant ${K} : index
      %cKC = arith.constant ${KC} : index
      %cKP = arith.constant ${KP} : index
      %cNB = arith.constant ${NB} : index
      %cMB = arith.constant ${MB} : index
      %cNG = arith.constant ${NG} : index
      %m_tiles_all = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%m]
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<?x${KH}x16xi32>{%m_tiles_all}
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> ${w_type}
      %sums = stream.binding.subspan %sums_binding[%c0] : !stream.binding -> ${sums_type}{%m_tiles_all}
      %out = stream.binding.subspan %out_binding[%c0] : !stream.binding -> memref<?x${N}x${out_elem}>{%m}
${panel_alloc}
${scale_defs}${alpha_defs}
      %zero = arith.constant dense<0.0> : vector<16xf32>
${decode_defs}
      %id = hal.interface.workgroup.id[0] : index
      %m_block = arith.divui %id, %cNG : index
      %n_block = arith.remui %id, %cNG : index
      %m0 = arith.muli %m_block, %cMB : index
      %n0 = arith.muli %n_block, %cNB : index
      %m_full = arith.addi %m0, %cMB : index
      %m_end = arith.minui %m_full, %m : index
      %m_last = arith.subi %m, %c1 : index
      %m_rows = arith.subi %m_end, %m0 : index
      %m_tiles = arith.divui %m_rows, %c16 : index
      %m_tiled = arith.muli %m_tiles, %c16 : index
      %m_tiles_end = arith.addi %m0, %m_tiled : index
      scf.for %nt = %c0 to %cNB step %c16 {
        %n = arith.addi %n0, %nt : index
        %strip = arith.divui %n, %c16 : index
        scf.for %kc = %c0 to %cK step %cKC {
          %first = arith.cmpi eq, %kc, %c0 : index
${panel_build}
          scf.for %tile0 = %m0 to %m_tiles_end step %c16 {
${prefetch}
${full_tile}
          }
          %tail = arith.cmpi ult, %m_tiles_end, %m_end : index
          scf.if %tail {
            %tile0 = arith.addi %m_tiles_end, %c0 : index
${tail_tile}
          }
        }
      }
      return
    }
  }
}
