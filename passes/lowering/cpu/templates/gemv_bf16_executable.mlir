// The matrix-vector product of a bf16 weight's one-row linear (passes/bf16_decode_gemv.py):
// acc[n] = sum_k x[k] * w[n, k] for x [${K}] f32 and w [${N}, ${K}] bf16, read as stored. Each
// workgroup takes ${rows} rows, one after another (each a contiguous stream); each step of a
// row's loop takes 32 weights (64 bytes), widened in registers exactly (a bf16's bits shifted
// into an f32's high half: vpmovzxwd, vpslld) and multiplied by x's values beside them with
// f32 FMAs into two 16-lane accumulators (products exact in f32: 8 by 24 significant bits
// need 32, so each FMA rounds once, as the data-tiled GEMM's do), whose lanes are summed at
// the row's end. f32 sums in this order, flush-to-zero as every CPU dispatch of IREE's.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%n: index) -> (index, index, index) {
    %groups = affine.apply affine_map<()[s0] -> (s0 ceildiv ${rows})>()[%n]
    %c1 = arith.constant 1 : index
    stream.return %groups, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @${fn}(%x_binding: !stream.binding, %w_binding: !stream.binding,
                     %acc_binding: !stream.binding) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %cK = arith.constant ${K} : index
      %cR = arith.constant ${rows} : index
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<${K}xf32>
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> memref<${N}x${K}xbf16>
      %acc = stream.binding.subspan %acc_binding[%c0] : !stream.binding -> memref<${N}xf32>
      %group = hal.interface.workgroup.id[0] : index
      %row0 = arith.muli %group, %cR : index
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %shift = arith.constant dense<16> : vector<16xi32>
      scf.for %r = %c0 to %cR step %c1 {
        %n = arith.addi %row0, %r : index
        %sums:2 = scf.for %k = %c0 to %cK step %c32
            iter_args(%sa = %zero, %sb = %zero) -> (vector<16xf32>, vector<16xf32>) {
          %k16 = arith.addi %k, %c16 : index
          %xa = vector.load %x[%k] : memref<${K}xf32>, vector<16xf32>
          %xb = vector.load %x[%k16] : memref<${K}xf32>, vector<16xf32>
          %wa = vector.load %w[%n, %k] : memref<${N}x${K}xbf16>, vector<16xbf16>
          %wb = vector.load %w[%n, %k16] : memref<${N}x${K}xbf16>, vector<16xbf16>
          %ia = arith.bitcast %wa : vector<16xbf16> to vector<16xi16>
          %ib = arith.bitcast %wb : vector<16xbf16> to vector<16xi16>
          %ea = arith.extui %ia : vector<16xi16> to vector<16xi32>
          %eb = arith.extui %ib : vector<16xi16> to vector<16xi32>
          %ha = arith.shli %ea, %shift : vector<16xi32>
          %hb = arith.shli %eb, %shift : vector<16xi32>
          %fa = arith.bitcast %ha : vector<16xi32> to vector<16xf32>
          %fb = arith.bitcast %hb : vector<16xi32> to vector<16xf32>
          %na = vector.fma %xa, %fa, %sa : vector<16xf32>
          %nb = vector.fma %xb, %fb, %sb : vector<16xf32>
          scf.yield %na, %nb : vector<16xf32>, vector<16xf32>
        }
        %lanes = arith.addf %sums#0, %sums#1 : vector<16xf32>
        %total = vector.reduction <add>, %lanes : vector<16xf32> into f32
        memref.store %total, %acc[%n] : memref<${N}xf32>
      }
      return
    }
  }
}
