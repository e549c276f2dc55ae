// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p compact-block-scales -p decode-gemv{isa=avx2} -p int-fp4-gemm %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p compact-block-scales -p int-fp4-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p compact-block-scales -p 'int-fp4-gemm{stored=true}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=STORED
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp4}' -p compact-block-scales -p int-fp4-gemm %s | FileCheck %s --check-prefix=MXFP4
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p compact-block-scales -p int-fp4-gemm %s | FileCheck %s --check-prefix=KEPT

// int-fp4-gemm marks nvfp4's GEMMs of many rows (a dynamic number, two; N a multiple of 8) as
// "avx2" and no other: not the one-row GEMM (decode-gemv's), not an N of 36.
// MARK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64.compact_ab
// MARK-NOT: qmlir.codes_gemm =
// MARK-SAME: qmlir.gemv = "avx2"
// MARK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab
// MARK-SAME: qmlir.codes_gemm = "avx2"
// MARK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.2x64.64x64.compact_ab
// MARK-SAME: qmlir.codes_gemm = "avx2"
// MARK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.2x64.36x64.compact_ab
// MARK-NOT: qmlir.codes_gemm =

// lower-named-ops writes a marked GEMM as A's codes as signed bytes (E2M1 values times 2), its
// offsets (12 times each 16's sum) and decoded scales, B laid out in lines of 8 rows x 4 codes
// (values times 2 plus 12) with its scales times a quarter, transposed, then one dispatch of the
// hand-written executable: per block of 16 codes, 8 rows of B's 4 lines, then for each of 4 rows
// of x 4 vpmaddubsw, their 16-bit sums added, vpmaddwd into 32 bits, less the offset, to f32
// and times the two scales into the sums; rows past M not stored. The global scales multiply
// the sums after the dispatch.
// CHECK: stream.executable private @[[EXE:qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab\$int_gemm_executable]] {
// CHECK: workgroups(%{{.*}}: index)
// CHECK: func.func @[[FN:.*\$int_gemm]](
// CHECK: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x128xi8>{%{{.*}}}
// CHECK: stream.binding.subspan %{{.*}} : !stream.binding -> memref<8x32x32xi8>
// CHECK: stream.binding.subspan %{{.*}} : !stream.binding -> memref<8x64xf32>
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args(
// CHECK-COUNT-4: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %c0] : memref<8x32x32xi8>, vector<32xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: arith.subi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x64xf32>, vector<8xf32>
// CHECK: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab(
// CHECK-SAME: qmlir.codes_gemm = "avx2"
// CHECK: %[[XQ:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<?x64x2xi8> into tensor<?x128xi8>
// CHECK: %[[WP:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3, 4]] : tensor<8x32x8x2x2xi8> into tensor<8x32x32xi8>
// CHECK: flow.dispatch @[[EXE]]::@[[FN]][%{{.*}}](%[[XQ]], %{{.*}}, %{{.*}}, %[[WP]], %{{.*}}, %{{.*}})
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg2, %arg5 : tensor<?x64xf32>, tensor<f32>, tensor<f32>)

// With stored=true (weights IREE would lay out each call) the GEMM reads B's codes and scales as
// stored: per 8 rows of B and K block, the executable splits each 8 bytes into 16 codes, looks
// them up (vpshufb) as values times 2 plus 12 and stores them as 4 lines' 4 bytes into a panel on
// the stack, the scales decoded beside them; the tiles read the panel; the definition lays
// nothing out and dispatches B as it is.
// STORED: stream.executable private @[[EXE:qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab\$int_gemm_executable]] {
// STORED: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x64xi8>
// STORED: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x8xi8>
// STORED: %[[PANEL:.*]] = memref.alloca() : memref<32x32xi8>
// STORED: %[[PSCALE:.*]] = memref.alloca() : memref<8x8xf32>
// STORED: scf.for %{{.*}} = %c0 to %{{.*}} step %{{.*}} {
// STORED: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xi8>, vector<8xi8>
// STORED: vector.shuffle
// STORED: llvm.call_intrinsic "llvm.x86.ssse3.pshuf.b.128"
// STORED-COUNT-4: vector.store %{{.*}}, %[[PANEL]][%{{.*}}, %{{.*}}] : memref<32x32xi8>, vector<4xi8>
// STORED: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x8xi8>
// STORED: memref.store %{{.*}}, %[[PSCALE]][%{{.*}}, %{{.*}}] : memref<8x8xf32>
// STORED: vector.load %[[PSCALE]][%{{.*}}, %c0] : memref<8x8xf32>, vector<8xf32>
// STORED-COUNT-4: vector.load %[[PANEL]][%{{.*}}, %c0] : memref<32x32xi8>, vector<32xi8>
// STORED: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab(
// STORED-SAME: qmlir.stored_b = true
// STORED-NOT: x32xi8>
// STORED: flow.dispatch @[[EXE]]::@{{.*}}[%{{.*}}](%{{.*}}, %{{.*}}, %{{.*}}, %arg3, %arg4, %{{[^)]*}}) : ({{.*}}, tensor<64x64xi8>, tensor<64x8xi8>, index)

// mxfp4's GEMMs (E8M0 scales of 1 x 32) are taken too.
// MXFP4: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab
// MXFP4-SAME: qmlir.codes_gemm = "avx2"
// MXFP4-SAME: qmlir.scale_format = "e8m0"

// Other recipes' GEMMs are left alone.
// KEPT-NOT: qmlir.codes_gemm =

func.func @one_row(%x: !torch.vtensor<[1,128],f32>) -> !torch.vtensor<[1,64],f32> {
  %w = torch.vtensor.literal(dense<0.25> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[1,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[1,64],f32>
  return %0 : !torch.vtensor<[1,64],f32>
}

func.func @rows(%x: !torch.vtensor<[?,128],f32>) -> !torch.vtensor<[?,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[?,64],f32>
  return %0 : !torch.vtensor<[?,64],f32>
}

func.func @two_rows(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.75> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}

func.func @n36(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,36],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<36x128xf32>) : !torch.vtensor<[36,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[36,128],f32>, !torch.none -> !torch.vtensor<[2,36],f32>
  return %0 : !torch.vtensor<[2,36],f32>
}
