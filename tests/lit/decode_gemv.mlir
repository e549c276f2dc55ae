// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p decode-gemv %s | FileCheck %s --check-prefix=BLOCK

// decode-gemv marks the one-row per-tensor FP8 GEMM (a decode step's: A [1, 128], B [64, 128])
// and no other: not a dynamic number of rows, not a K that is no multiple of 64, not two rows.
// MARK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// MARK-SAME: qmlir.gemv = true
// MARK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// MARK-NOT: qmlir.gemv
// MARK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x96.64x96
// MARK-NOT: qmlir.gemv
// MARK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.64x128
// MARK-NOT: qmlir.gemv
// MARK-LABEL: func.func @one_row

// lower-named-ops writes the marked GEMM as a dispatch of a hand-written executable of its own:
// B's codes (i8) go in as stored, A decoded to bf16; the loop decodes 64 codes of each of 4 rows
// with two byte-table lookups and multiplies them with vdpbf16ps; the scales multiply the sums.
// CHECK: stream.executable private @[[EXE:"?qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv_executable"?]]
// CHECK: stream.executable.export public @[[FN:"?qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv"?]] workgroups
// CHECK: affine_map<()[s0] -> (s0 ceildiv 8)>
// CHECK: memref<64x128xi8>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// CHECK-SAME: qmlir.gemv = true
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: flow.dispatch @[[EXE]]::@[[FN]][%{{.*}}](%{{.*}}, %arg2) : (tensor<128xbf16>, tensor<64x128xi8>) -> tensor<64xf32>
// CHECK: arith.mulf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// CHECK-NOT: flow.dispatch
// CHECK: linalg.matmul
// CHECK-LABEL: func.func @one_row

// fp8-block's GEMMs keep the block-scaled lowering.
// BLOCK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block
// BLOCK-NOT: qmlir.gemv
// BLOCK-LABEL: func.func @one_row
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

func.func @short_k(%x: !torch.vtensor<[1,96],f32>) -> !torch.vtensor<[1,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x96xf32>) : !torch.vtensor<[64,96],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[1,96],f32>, !torch.vtensor<[64,96],f32>, !torch.none -> !torch.vtensor<[1,64],f32>
  return %0 : !torch.vtensor<[1,64],f32>
}

func.func @two_rows(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.75> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}
