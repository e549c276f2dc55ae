// The GEMM of many rows of an FP4 activation and weight in integers (AVX2;
// passes/lowering/cpu/int_gemm.py): acc[m, n] = sum over K's steps of 16 b of
// (sum_k (2 w[n, k] + 12) * 2 a[m, k] - xo[m, b]) * xs[m, b] * ws[b, n], where 2 a (xq, [M, ${K}]
// signed bytes, -12..12) and 2 w + 12 (unsigned bytes 0..24: per 8 rows of w and 4 of K the 8
// rows' 4 bytes each, a 32-byte line) are the E2M1 values times 2, xo[m, b] 12 times the step's
// sum of xq (the offset's products), xs A's block scales decoded and ws B's${ws_doc}. Each
// step's sum of products is exact in integers: vpmaddubsw sums a pair of products
// in 16 bits (at most 576: never saturated), 4 such vectors added in 16 bits (at most 2304),
// vpmaddwd adds the pairs into 32 bits, less the offset: 4 times the step's exact sum of
// products, converted to f32 exactly, times the two scales' product (exact: 4-bit significands)
// and added to the f32 sums (vfmadd: one rounding a step, the steps in K's order). Each
// workgroup takes ${MB} rows of x and ${NB} rows of w, 8 of w at a time (a lane each), ${KCB} steps
// of K at a time (the sums so far read back from the output after the first), 4 rows of x at a
// time (a last tile of fewer: rows past M repeat the last and are not stored): per step, the 8
// rows' 4 lines of w and their scales, then per row of x its 16 codes broadcast 4 bytes at a
// time, each product vector summed into the last (4 accumulators: no spills; two groups of 8
// rows with 8 accumulators ran 1.03-1.12x this time on the AVX2 host). Needs AVX2 and FMA.
stream.executable private @${exe} {
  stream.executable.export public @${fn} workgroups(%m: index) -> (index, index, index) {
    %groups = affine.apply affine_map<()[s0] -> ((s0 ceildiv ${MB}) * ${NG})>()[%m]
    %c1 = arith.constant 1 : index
    stream.return %groups, %c1, %c1 : index, index, index
  }
  builtin.module {${globals}
    func.func @${fn}(%xq_binding: !stream.binding, %xs_binding: !stream.binding,
                   %xo_binding: !stream.binding, %w_binding: !stream.binding,
                   %s_binding: !stream.binding, %out_binding: !stream.binding, %m: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c0i = arith.constant 0 : index
      %c1i = arith.constant 1 : index
      %c2i = arith.constant 2 : index
      %c3i = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %cKB = arith.constant ${KB} : index
      %cKCB = arith.constant ${KCB} : index
      %cNB = arith.constant ${NB} : index
      %cMB = arith.constant ${MB} : index
      %cNG = arith.constant ${NG} : index
      %xq = stream.binding.subspan %xq_binding[%c0] : !stream.binding -> memref<?x${K}xi8>{%m}
      %xs = stream.binding.subspan %xs_binding[%c0] : !stream.binding -> memref<?x${KB}xf32>{%m}
      %xo = stream.binding.subspan %xo_binding[%c0] : !stream.binding -> memref<?x${KB}xi32>{%m}
      %w = stream.binding.subspan %w_binding[%c0] : !stream.binding -> ${w_type}
      %s = stream.binding.subspan %s_binding[%c0] : !stream.binding -> ${s_type}
      %out = stream.binding.subspan %out_binding[%c0] : !stream.binding -> memref<?x${N}xf32>{%m}${panel_alloc}
      %zero = arith.constant dense<0.0> : vector<8xf32>
      %ones = arith.constant dense<1> : vector<16xi16>
      %id = hal.interface.workgroup.id[0] : index
      %m_block = arith.divui %id, %cNG : index
      %n_block = arith.remui %id, %cNG : index
      %m0 = arith.muli %m_block, %cMB : index
      %n0 = arith.muli %n_block, %cNB : index
      %m_full = arith.addi %m0, %cMB : index
      %m_end = arith.minui %m_full, %m : index
      %m_last = arith.subi %m, %c1 : index
      scf.for %nt = %c0 to %cNB step %c8 {
        %n = arith.addi %n0, %nt : index
        %g0 = arith.divui %n, %c8 : index
        scf.for %kb0 = %c0 to %cKB step %cKCB {
          %kb_next = arith.addi %kb0, %cKCB : index
          %kb_end = arith.minui %kb_next, %cKB : index
          %kcb = arith.subi %kb_end, %kb0 : index
          %first = arith.cmpi eq, %kb0, %c0 : index${panel_build}
          scf.for %t0 = %m0 to %m_end step %c4 {
            %u0 = arith.addi %t0, %c0i : index
            %r0 = arith.minui %u0, %m_last : index
            %i0 = scf.if %first -> (vector<8xf32>) {
              scf.yield %zero : vector<8xf32>
            } else {
              %sofar0 = vector.load %out[%r0, %n] : memref<?x${N}xf32>, vector<8xf32>
              scf.yield %sofar0 : vector<8xf32>
            }
            %u1 = arith.addi %t0, %c1i : index
            %r1 = arith.minui %u1, %m_last : index
            %i1 = scf.if %first -> (vector<8xf32>) {
              scf.yield %zero : vector<8xf32>
            } else {
              %sofar1 = vector.load %out[%r1, %n] : memref<?x${N}xf32>, vector<8xf32>
              scf.yield %sofar1 : vector<8xf32>
            }
            %u2 = arith.addi %t0, %c2i : index
            %r2 = arith.minui %u2, %m_last : index
            %i2 = scf.if %first -> (vector<8xf32>) {
              scf.yield %zero : vector<8xf32>
            } else {
              %sofar2 = vector.load %out[%r2, %n] : memref<?x${N}xf32>, vector<8xf32>
              scf.yield %sofar2 : vector<8xf32>
            }
            %u3 = arith.addi %t0, %c3i : index
            %r3 = arith.minui %u3, %m_last : index
            %i3 = scf.if %first -> (vector<8xf32>) {
              scf.yield %zero : vector<8xf32>
            } else {
              %sofar3 = vector.load %out[%r3, %n] : memref<?x${N}xf32>, vector<8xf32>
              scf.yield %sofar3 : vector<8xf32>
            }
            %acc:4 = scf.for %bl = %c0 to %kcb step %c1
                iter_args(%in00 = %i0, %in10 = %i1, %in20 = %i2, %in30 = %i3) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
              %b = arith.addi %kb0, %bl : index
              %wb = arith.addi ${w_base}, %bl : index
              %q0 = arith.muli %wb, %c4 : index
              %q1 = arith.addi %q0, %c1 : index
              %q2 = arith.addi %q0, %c2i : index
              %q3 = arith.addi %q0, %c3i : index
              %k0 = arith.muli %b, %c16 : index
              %k1 = arith.addi %k0, %c4 : index
              %k2 = arith.addi %k0, %c8 : index
              %k3 = arith.addi %k1, %c8 : index
              %sw0 = vector.load ${ws}[%wb, ${ws_col}] : ${ws_type}, vector<8xf32>
              %w00 = vector.load ${wp}[${wp_lead}%q0, %c0] : ${wp_type}, vector<32xi8>
              %w01 = vector.load ${wp}[${wp_lead}%q1, %c0] : ${wp_type}, vector<32xi8>
              %w02 = vector.load ${wp}[${wp_lead}%q2, %c0] : ${wp_type}, vector<32xi8>
              %w03 = vector.load ${wp}[${wp_lead}%q3, %c0] : ${wp_type}, vector<32xi8>
              // each row of x: its 16 codes as 4 broadcasts of 4 bytes, its block's offset and scale
              // row 0
              %a00w = vector.load %xq[%r0, %k0] : memref<?x${K}xi8>, vector<4xi8>
              %a00v = vector.bitcast %a00w : vector<4xi8> to vector<1xi32>
              %a00s = vector.extract %a00v[0] : i32 from vector<1xi32>
              %a00b = vector.broadcast %a00s : i32 to vector<8xi32>
              %a00 = vector.bitcast %a00b : vector<8xi32> to vector<32xi8>
              %a01w = vector.load %xq[%r0, %k1] : memref<?x${K}xi8>, vector<4xi8>
              %a01v = vector.bitcast %a01w : vector<4xi8> to vector<1xi32>
              %a01s = vector.extract %a01v[0] : i32 from vector<1xi32>
              %a01b = vector.broadcast %a01s : i32 to vector<8xi32>
              %a01 = vector.bitcast %a01b : vector<8xi32> to vector<32xi8>
              %a02w = vector.load %xq[%r0, %k2] : memref<?x${K}xi8>, vector<4xi8>
              %a02v = vector.bitcast %a02w : vector<4xi8> to vector<1xi32>
              %a02s = vector.extract %a02v[0] : i32 from vector<1xi32>
              %a02b = vector.broadcast %a02s : i32 to vector<8xi32>
              %a02 = vector.bitcast %a02b : vector<8xi32> to vector<32xi8>
              %a03w = vector.load %xq[%r0, %k3] : memref<?x${K}xi8>, vector<4xi8>
              %a03v = vector.bitcast %a03w : vector<4xi8> to vector<1xi32>
              %a03s = vector.extract %a03v[0] : i32 from vector<1xi32>
              %a03b = vector.broadcast %a03s : i32 to vector<8xi32>
              %a03 = vector.bitcast %a03b : vector<8xi32> to vector<32xi8>
              %o0s = memref.load %xo[%r0, %b] : memref<?x${KB}xi32>
              %o0 = vector.broadcast %o0s : i32 to vector<8xi32>
              %s0s = memref.load %xs[%r0, %b] : memref<?x${KB}xf32>
              %s0 = vector.broadcast %s0s : f32 to vector<8xf32>
              %p000 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w00, %a00) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p001 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w01, %a01) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p002 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w02, %a02) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p003 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w03, %a03) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p0001 = arith.addi %p000, %p001 : vector<16xi16>
              %p00012 = arith.addi %p0001, %p002 : vector<16xi16>
              %p00 = arith.addi %p00012, %p003 : vector<16xi16>
              %q00 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%p00, %ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
              %d00 = arith.subi %q00, %o0 : vector<8xi32>
              %f00 = arith.sitofp %d00 : vector<8xi32> to vector<8xf32>
              %c00 = arith.mulf %s0, %sw0 : vector<8xf32>
              %n00x = vector.fma %f00, %c00, %in00 : vector<8xf32>
              // row 1
              %a10w = vector.load %xq[%r1, %k0] : memref<?x${K}xi8>, vector<4xi8>
              %a10v = vector.bitcast %a10w : vector<4xi8> to vector<1xi32>
              %a10s = vector.extract %a10v[0] : i32 from vector<1xi32>
              %a10b = vector.broadcast %a10s : i32 to vector<8xi32>
              %a10 = vector.bitcast %a10b : vector<8xi32> to vector<32xi8>
              %a11w = vector.load %xq[%r1, %k1] : memref<?x${K}xi8>, vector<4xi8>
              %a11v = vector.bitcast %a11w : vector<4xi8> to vector<1xi32>
              %a11s = vector.extract %a11v[0] : i32 from vector<1xi32>
              %a11b = vector.broadcast %a11s : i32 to vector<8xi32>
              %a11 = vector.bitcast %a11b : vector<8xi32> to vector<32xi8>
              %a12w = vector.load %xq[%r1, %k2] : memref<?x${K}xi8>, vector<4xi8>
              %a12v = vector.bitcast %a12w : vector<4xi8> to vector<1xi32>
              %a12s = vector.extract %a12v[0] : i32 from vector<1xi32>
              %a12b = vector.broadcast %a12s : i32 to vector<8xi32>
              %a12 = vector.bitcast %a12b : vector<8xi32> to vector<32xi8>
              %a13w = vector.load %xq[%r1, %k3] : memref<?x${K}xi8>, vector<4xi8>
              %a13v = vector.bitcast %a13w : vector<4xi8> to vector<1xi32>
              %a13s = vector.extract %a13v[0] : i32 from vector<1xi32>
              %a13b = vector.broadcast %a13s : i32 to vector<8xi32>
              %a13 = vector.bitcast %a13b : vector<8xi32> to vector<32xi8>
              %o1s = memref.load %xo[%r1, %b] : memref<?x${KB}xi32>
              %o1 = vector.broadcast %o1s : i32 to vector<8xi32>
              %s1s = memref.load %xs[%r1, %b] : memref<?x${KB}xf32>
              %s1 = vector.broadcast %s1s : f32 to vector<8xf32>
              %p100 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w00, %a10) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p101 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w01, %a11) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p102 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w02, %a12) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p103 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w03, %a13) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p1001 = arith.addi %p100, %p101 : vector<16xi16>
              %p10012 = arith.addi %p1001, %p102 : vector<16xi16>
              %p10 = arith.addi %p10012, %p103 : vector<16xi16>
              %q10 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%p10, %ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
              %d10 = arith.subi %q10, %o1 : vector<8xi32>
              %f10 = arith.sitofp %d10 : vector<8xi32> to vector<8xf32>
              %c10 = arith.mulf %s1, %sw0 : vector<8xf32>
              %n10x = vector.fma %f10, %c10, %in10 : vector<8xf32>
              // row 2
              %a20w = vector.load %xq[%r2, %k0] : memref<?x${K}xi8>, vector<4xi8>
              %a20v = vector.bitcast %a20w : vector<4xi8> to vector<1xi32>
              %a20s = vector.extract %a20v[0] : i32 from vector<1xi32>
              %a20b = vector.broadcast %a20s : i32 to vector<8xi32>
              %a20 = vector.bitcast %a20b : vector<8xi32> to vector<32xi8>
              %a21w = vector.load %xq[%r2, %k1] : memref<?x${K}xi8>, vector<4xi8>
              %a21v = vector.bitcast %a21w : vector<4xi8> to vector<1xi32>
              %a21s = vector.extract %a21v[0] : i32 from vector<1xi32>
              %a21b = vector.broadcast %a21s : i32 to vector<8xi32>
              %a21 = vector.bitcast %a21b : vector<8xi32> to vector<32xi8>
              %a22w = vector.load %xq[%r2, %k2] : memref<?x${K}xi8>, vector<4xi8>
              %a22v = vector.bitcast %a22w : vector<4xi8> to vector<1xi32>
              %a22s = vector.extract %a22v[0] : i32 from vector<1xi32>
              %a22b = vector.broadcast %a22s : i32 to vector<8xi32>
              %a22 = vector.bitcast %a22b : vector<8xi32> to vector<32xi8>
              %a23w = vector.load %xq[%r2, %k3] : memref<?x${K}xi8>, vector<4xi8>
              %a23v = vector.bitcast %a23w : vector<4xi8> to vector<1xi32>
              %a23s = vector.extract %a23v[0] : i32 from vector<1xi32>
              %a23b = vector.broadcast %a23s : i32 to vector<8xi32>
              %a23 = vector.bitcast %a23b : vector<8xi32> to vector<32xi8>
              %o2s = memref.load %xo[%r2, %b] : memref<?x${KB}xi32>
              %o2 = vector.broadcast %o2s : i32 to vector<8xi32>
              %s2s = memref.load %xs[%r2, %b] : memref<?x${KB}xf32>
              %s2 = vector.broadcast %s2s : f32 to vector<8xf32>
              %p200 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w00, %a20) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p201 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w01, %a21) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p202 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w02, %a22) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p203 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w03, %a23) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p2001 = arith.addi %p200, %p201 : vector<16xi16>
              %p20012 = arith.addi %p2001, %p202 : vector<16xi16>
              %p20 = arith.addi %p20012, %p203 : vector<16xi16>
              %q20 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%p20, %ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
              %d20 = arith.subi %q20, %o2 : vector<8xi32>
              %f20 = arith.sitofp %d20 : vector<8xi32> to vector<8xf32>
              %c20 = arith.mulf %s2, %sw0 : vector<8xf32>
              %n20x = vector.fma %f20, %c20, %in20 : vector<8xf32>
              // row 3
              %a30w = vector.load %xq[%r3, %k0] : memref<?x${K}xi8>, vector<4xi8>
              %a30v = vector.bitcast %a30w : vector<4xi8> to vector<1xi32>
              %a30s = vector.extract %a30v[0] : i32 from vector<1xi32>
              %a30b = vector.broadcast %a30s : i32 to vector<8xi32>
              %a30 = vector.bitcast %a30b : vector<8xi32> to vector<32xi8>
              %a31w = vector.load %xq[%r3, %k1] : memref<?x${K}xi8>, vector<4xi8>
              %a31v = vector.bitcast %a31w : vector<4xi8> to vector<1xi32>
              %a31s = vector.extract %a31v[0] : i32 from vector<1xi32>
              %a31b = vector.broadcast %a31s : i32 to vector<8xi32>
              %a31 = vector.bitcast %a31b : vector<8xi32> to vector<32xi8>
              %a32w = vector.load %xq[%r3, %k2] : memref<?x${K}xi8>, vector<4xi8>
              %a32v = vector.bitcast %a32w : vector<4xi8> to vector<1xi32>
              %a32s = vector.extract %a32v[0] : i32 from vector<1xi32>
              %a32b = vector.broadcast %a32s : i32 to vector<8xi32>
              %a32 = vector.bitcast %a32b : vector<8xi32> to vector<32xi8>
              %a33w = vector.load %xq[%r3, %k3] : memref<?x${K}xi8>, vector<4xi8>
              %a33v = vector.bitcast %a33w : vector<4xi8> to vector<1xi32>
              %a33s = vector.extract %a33v[0] : i32 from vector<1xi32>
              %a33b = vector.broadcast %a33s : i32 to vector<8xi32>
              %a33 = vector.bitcast %a33b : vector<8xi32> to vector<32xi8>
              %o3s = memref.load %xo[%r3, %b] : memref<?x${KB}xi32>
              %o3 = vector.broadcast %o3s : i32 to vector<8xi32>
              %s3s = memref.load %xs[%r3, %b] : memref<?x${KB}xf32>
              %s3 = vector.broadcast %s3s : f32 to vector<8xf32>
              %p300 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w00, %a30) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p301 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w01, %a31) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p302 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w02, %a32) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p303 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%w03, %a33) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
              %p3001 = arith.addi %p300, %p301 : vector<16xi16>
              %p30012 = arith.addi %p3001, %p302 : vector<16xi16>
              %p30 = arith.addi %p30012, %p303 : vector<16xi16>
              %q30 = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%p30, %ones) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
              %d30 = arith.subi %q30, %o3 : vector<8xi32>
              %f30 = arith.sitofp %d30 : vector<8xi32> to vector<8xf32>
              %c30 = arith.mulf %s3, %sw0 : vector<8xf32>
              %n30x = vector.fma %f30, %c30, %in30 : vector<8xf32>
              scf.yield %n00x, %n10x, %n20x, %n30x : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
            }
            %st0 = arith.cmpi ult, %u0, %m_end : index
            scf.if %st0 {
              vector.store %acc#0, %out[%u0, %n] : memref<?x${N}xf32>, vector<8xf32>
            }
            %st1 = arith.cmpi ult, %u1, %m_end : index
            scf.if %st1 {
              vector.store %acc#1, %out[%u1, %n] : memref<?x${N}xf32>, vector<8xf32>
            }
            %st2 = arith.cmpi ult, %u2, %m_end : index
            scf.if %st2 {
              vector.store %acc#2, %out[%u2, %n] : memref<?x${N}xf32>, vector<8xf32>
            }
            %st3 = arith.cmpi ult, %u3, %m_end : index
            scf.if %st3 {
              vector.store %acc#3, %out[%u3, %n] : memref<?x${N}xf32>, vector<8xf32>
            }
          }
        }
      }
      return
    }
  }
}
