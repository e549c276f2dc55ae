// The matrix-vector product of a one-row scaled GEMM (passes/lowering/cpu/gemv.py):
// acc[n] = sum_k x[k] * value(w[n, k]) for x [${XK}] ${x_elem} (the decoded activation) and w
// [${N}, ${K}] codes, read as stored. Each workgroup takes ${rows} rows, one after another
// (each a contiguous stream of codes: 1.7x the bandwidth of 4 rows interleaved, RESULTS.md;
// AVX2 code prefetches ahead: gemv_prefetch.mlir);
// each step of a row's loop takes ${chunk_count} x 64 bytes, decoded in registers (${decode_doc})
// and multiplied by x's values beside them (products exact in f32: each factor has at most 4
// significant bits; AVX2's nvfp4 sums them exactly in integers first; f32 sums, flush-to-zero
// as every CPU dispatch of IREE's) into two of the ${accumulators} ${lanes_count}-lane
// accumulators, as they are (per-tensor scales, applied after) or times their K block's
// scales; the accumulators' lanes are summed at the row's end. Needs ${needs} (decode-gemv
// runs only for such a CPU).
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%n: index) -> (index, index, index) {
    %groups = affine.apply affine_map<()[s0] -> (s0 ceildiv ${rows})>()[%n]
    %c1 = arith.constant 1 : index
    stream.return %groups, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%x_binding: !stream.binding, ${x_scales_arg}%w_binding: !stream.binding,
                     ${w_scales_arg}%acc_binding: !stream.binding) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %c_step = arith.constant ${step} : index
      %cK = arith.constant ${K} : index
      %cR = arith.constant ${rows} : index
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<${XK}x${x_elem}>
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> memref<${N}x${K}xi8>
      %acc = stream.binding.subspan %acc_binding[%c0] : !stream.binding -> memref<${N}xf32>${scale_defs}${prefetch_defs}
      %group = hal.interface.workgroup.id[0] : index
      %row0 = arith.muli %group, %cR : index
      %zero = arith.constant dense<0.0> : vector<${lanes_count}xf32>
${decode_defs}${group_defs}
      scf.for %r = %c0 to %cR step %c1 {
        %n = arith.addi %row0, %r : index${row_defs}
        %sums:${accumulators} = scf.for %k = %c0 to %cK step %c_step
            iter_args(${iter_args}) -> (${acc_types}) {${prefetch}
${chunks}
          scf.yield ${yields} : ${acc_types}
        }
${lanes}
        %total = vector.reduction <add>, %lanes : vector<${lanes_count}xf32> into f32${scale_total}
        memref.store ${total}, %acc[%n] : memref<${N}xf32>
      }${decode_end}
      return
    }
  }
}
