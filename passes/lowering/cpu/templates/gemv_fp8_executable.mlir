// The matrix-vector product of a one-row scaled GEMM (passes/lowering/cpu/gemv.py):
// acc[n] = sum_k x[k] * value(w[n, k]) for x [${K}] bf16 (the decoded activation) and w
// [${N}, ${K}] FP8 codes, read as stored. Each workgroup takes ${rows} rows, one after another
// (each a contiguous stream of codes: 1.7x the bandwidth of 4 rows interleaved, RESULTS.md);
// each step of a row's loop takes ${chunk_count} x 64 codes (gemv_fp8_decode.mlir): their bf16
// bits from two 128-entry byte tables (vpermi2b: the high and the low byte of each magnitude's
// value; the sign bit or-ed in), interleaved into 64 bf16 values and multiplied by x's 64 with
// vdpbf16ps (products exact in f32: an FP8 value and x's each have at most 4 significant bits;
// f32 sums, flush-to-zero as every CPU dispatch of IREE's) into two of the ${accumulators}
// accumulators, as they are (gemv_accumulate.mlir: per-tensor scales, applied after) or times
// their K block's scales (gemv_accumulate_scaled.mlir); the accumulators' lanes are summed at
// the row's end. Needs AVX512-BF16 and AVX512-VBMI (decode-gemv runs only for such a CPU).
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
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<${XK}xbf16>
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> memref<${N}x${K}xi8>
      %acc = stream.binding.subspan %acc_binding[%c0] : !stream.binding -> memref<${N}xf32>${scale_defs}
      %group = hal.interface.workgroup.id[0] : index
      %row0 = arith.muli %group, %cR : index
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %sign = arith.constant dense<-128> : vector<64xi8>
      %hi_lo_table = arith.constant dense<${hi0}> : vector<64xi8>
      %hi_hi_table = arith.constant dense<${hi1}> : vector<64xi8>
      %lo_lo_table = arith.constant dense<${lo0}> : vector<64xi8>
      %lo_hi_table = arith.constant dense<${lo1}> : vector<64xi8>
      scf.for %r = %c0 to %cR step %c1 {
        %n = arith.addi %row0, %r : index${row_defs}
        %sums:${accumulators} = scf.for %k = %c0 to %cK step %c_step
            iter_args(${iter_args}) -> (${acc_types}) {
${chunks}
          scf.yield ${yields} : ${acc_types}
        }
${lanes}
        %total = vector.reduction <add>, %lanes : vector<16xf32> into f32
        memref.store %total, %acc[%n] : memref<${N}xf32>
      }
      return
    }
  }
}
