// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block pow2_scales=false}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX

// decode-gemv marks the one-row per-tensor FP8 GEMM (a decode step's: A [1, 128], B [64, 128])
// and no other: not a dynamic number of rows, not a K that is no multiple of 64, not two rows.
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// MARK-SAME: qmlir.gemv = true
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// MARK-NOT: qmlir.gemv
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x96.64x96
// MARK-NOT: qmlir.gemv
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.64x128
// MARK-NOT: qmlir.gemv

// lower-named-ops writes the marked GEMM as a dispatch of a hand-written executable of its own:
// B's codes (i8) go in as stored, A decoded to bf16; 8 rows a workgroup (64 rows: 8 workgroups),
// one after another, each step 2 x 64 codes decoded with two byte-table lookups and multiplied
// with vdpbf16ps; the lanes summed at the row's end; the scales multiply the sums.
// CHECK: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv_executable]] {
// CHECK: stream.executable.export public @[[FN:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv]] workgroups
// CHECK: func.func @[[FN]](%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding)
// CHECK: %[[W:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x128xi8>
// CHECK: %[[ROW0:.*]] = arith.muli %workgroup_id_x, %c8 : index
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c128 iter_args
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<64xi8>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<64xi8>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: scf.yield
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK: memref.store
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// CHECK-SAME: qmlir.gemv = true
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: flow.dispatch @[[EXE]]::@[[FN]][%{{.*}}](%{{.*}}, %arg2) : (tensor<128xbf16>, tensor<64x128xi8>) -> tensor<64xf32>
// CHECK: arith.mulf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// CHECK-NOT: flow.dispatch
// CHECK: linalg.matmul

// Block scales that are powers of two (fp8-block's default, mxfp8's E8M0; bf16 GEMM operands)
// take it too, K a multiple of the block (128, 32); fp8-block with f32 scales does not (its
// products would round).
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128
// BLOCK-SAME: qmlir.gemv = true
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx128.64x128
// BLOCK-NOT: qmlir.gemv
// KEPT: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128
// KEPT-NOT: qmlir.gemv

// mxfp8: both operands' E8M0 scales unswizzled outside the executable, x's decoded to f32 there,
// the rows' codes decoded in the loop; each 32 codes' products summed on their own and added
// times the two scales of their block.
// MX: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x128.64x128\$gemv_executable]] {
// MX: func.func @{{.*}}(%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding)
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<4xf32>
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x4xi8>
// MX: memref.load %{{.*}} : memref<64x4xi8>
// MX: arith.shli
// MX: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%cst
// MX: vector.fma
// MX: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x128.64x128
// MX: arith.shli %{{.*}}, %{{.*}} : i32
// MX: flow.dispatch @[[EXE]]::@{{.*}}(%{{.*}}, %{{.*}}, %arg2, %{{.*}}) : (tensor<128xbf16>, tensor<4xf32>, tensor<64x128xi8>, tensor<64x4xi8>) -> tensor<64xf32>
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
