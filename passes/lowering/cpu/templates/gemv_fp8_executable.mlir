// The matrix-vector product of a one-row scaled GEMM (decode-gemv.py, gemv.py):
// acc[n] = sum_k x[k] * value(w[n, k]) for x [${K}] bf16 (decoded activation values) and
// w [${N}, ${K}] FP8 codes, read as stored. Each workgroup takes ${rows} rows; each step of its
// loop takes 4 rows x 64 codes: the codes' bf16 bits come from two 128-entry byte tables
// (vpermi2b: high and low byte of each magnitude's value, the sign bit or-ed in), are
// interleaved into 64 bf16 values and multiplied by x's 64 with vdpbf16ps (products exact in
// f32: FP8 values have at most 4 significant bits, so does x; f32 sums, flush-to-zero as every
// CPU dispatch of IREE's). Needs AVX512-BF16 and AVX512-VBMI (the pass checks the target).
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
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %cK = arith.constant ${K} : index
      %cR = arith.constant ${rows} : index
      %x = stream.binding.subspan %x_binding[%c0] : !stream.binding -> memref<${K}xbf16>
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> memref<${N}x${K}xi8>
      %acc = stream.binding.subspan %acc_binding[%c0] : !stream.binding -> memref<${N}xf32>
      %group = hal.interface.workgroup.id[0] : index
      %row0 = arith.muli %group, %cR : index
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %sign = arith.constant dense<-128> : vector<64xi8>
      %hi_lo_table = arith.constant dense<${hi0}> : vector<64xi8>
      %hi_hi_table = arith.constant dense<${hi1}> : vector<64xi8>
      %lo_lo_table = arith.constant dense<${lo0}> : vector<64xi8>
      %lo_hi_table = arith.constant dense<${lo1}> : vector<64xi8>
      scf.for %r = %c0 to %cR step %c4 {
        %n0 = arith.addi %row0, %r : index
        %n1 = arith.addi %n0, %c1 : index
        %n2 = arith.addi %n0, %c2 : index
        %n3 = arith.addi %n0, %c3 : index
        %sums:8 = scf.for %k = %c0 to %cK step %c64
            iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero,
                      %b0 = %zero, %b1 = %zero, %b2 = %zero, %b3 = %zero)
            -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>,
                vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
          %k32 = arith.addi %k, %c32 : index
          %xa = vector.load %x[%k] : memref<${K}xbf16>, vector<32xbf16>
          %xb = vector.load %x[%k32] : memref<${K}xbf16>, vector<32xbf16>
${row0}
${row1}
${row2}
${row3}
          scf.yield %w0_next_a, %w1_next_a, %w2_next_a, %w3_next_a,
                    %w0_next_b, %w1_next_b, %w2_next_b, %w3_next_b
              : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>,
                vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
        }
        %t0 = arith.addf %sums#0, %sums#4 : vector<16xf32>
        %t1 = arith.addf %sums#1, %sums#5 : vector<16xf32>
        %t2 = arith.addf %sums#2, %sums#6 : vector<16xf32>
        %t3 = arith.addf %sums#3, %sums#7 : vector<16xf32>
        %s0 = vector.reduction <add>, %t0 : vector<16xf32> into f32
        %s1 = vector.reduction <add>, %t1 : vector<16xf32> into f32
        %s2 = vector.reduction <add>, %t2 : vector<16xf32> into f32
        %s3 = vector.reduction <add>, %t3 : vector<16xf32> into f32
        memref.store %s0, %acc[%n0] : memref<${N}xf32>
        memref.store %s1, %acc[%n1] : memref<${N}xf32>
        memref.store %s2, %acc[%n2] : memref<${N}xf32>
        memref.store %s3, %acc[%n3] : memref<${N}xf32>
      }
      return
    }
  }
}
