// RUN: %qmlir-opt -p bf16-prefill-gemm %s | FileCheck %s

// A bf16 weight's linear of many rows (a dynamic number, a static 3) calls the GEMM over the
// weight as stored: the bias widened and added to the f32 sums, then rounded to bf16 once.
// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<64x32xbf16>)
// CHECK: %[[B:.*]] = torch.vtensor.literal(dense<5.000000e-01> : tensor<64xbf16>)
// CHECK-DAG: %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,?,32],bf16> -> tensor<1x?x32xbf16>
// CHECK-DAG: %[[WB:.*]] = torch_c.to_builtin_tensor %[[W]] : !torch.vtensor<[64,32],bf16> -> tensor<64x32xbf16>
// CHECK: %[[G:.*]] = call @qmlir.gemm_bf16.1xDx32.64(%[[X]], %[[WB]]) : (tensor<1x?x32xbf16>, tensor<64x32xbf16>) -> tensor<1x?x64xf32>
// CHECK: %[[GT:.*]] = torch_c.from_builtin_tensor %[[G]] : tensor<1x?x64xf32> -> !torch.vtensor<[1,?,64],f32>
// CHECK: %[[BF:.*]] = torch.prims.convert_element_type %[[B]], %{{.*}} -> !torch.vtensor<[64],f32>
// CHECK: %[[S:.*]] = torch.aten.add.Tensor %[[GT]], %[[BF]], %{{.*}} -> !torch.vtensor<[1,?,64],f32>
// CHECK: torch.prims.convert_element_type %[[S]], %{{.*}} -> !torch.vtensor<[1,?,64],bf16>
// CHECK-NOT: torch.aten.linear %arg0
// Three static rows, no bias: the GEMM rounds its outputs to bf16 itself (``.rounded``), no
// conversion follows.
// CHECK: %[[G3:.*]] = call @qmlir.gemm_bf16.3x32.64.rounded(
// CHECK-NEXT: torch_c.from_builtin_tensor %[[G3]] : tensor<3x64xbf16> -> !torch.vtensor<[3,64],bf16>
// CHECK-NOT: torch.prims.convert_element_type
// Left to IREE: one row (bf16-decode-gemv's), K no multiple of 32, N no multiple of 16, f32
// operands (a widened weight: a CPU without AVX512-BF16), an activation as the weight.
// CHECK: torch.aten.linear %{{.*}} : !torch.vtensor<[1,32],bf16>, !torch.vtensor<[64,32],bf16>
// CHECK: torch.aten.linear %{{.*}} : !torch.vtensor<[3,24],bf16>, !torch.vtensor<[64,24],bf16>
// CHECK: torch.aten.linear %{{.*}} : !torch.vtensor<[3,32],bf16>, !torch.vtensor<[8,32],bf16>
// CHECK: torch.aten.linear %{{.*}} : !torch.vtensor<[3,32],f32>, !torch.vtensor<[64,32],f32>
// CHECK: torch.aten.linear %{{.*}} : !torch.vtensor<[3,32],bf16>, !torch.vtensor<[64,32],bf16>
// CHECK: return
// One function and two executables a shape: A tiled as pairs, then the GEMM reading the
// weight's rows as bf16 values (no lookup tables) into panels of 16 rows.
// CHECK: stream.executable private @qmlir.gemm_bf16.1xDx32.64$x_executable
// CHECK: memref<?x32xbf16>
// CHECK-NOT: vpermi2b
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x32xbf16>, vector<32xbf16>
// CHECK: stream.executable private @qmlir.gemm_bf16.1xDx32.64$gemm_executable
// CHECK: memref<64x32xbf16>
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x32xbf16>, vector<32xbf16>
// CHECK: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}], read, locality<3>, data : memref<64x32xbf16>
// CHECK: llvm.x86.avx512bf16.dpbf16ps.512
// CHECK: func.func private @qmlir.gemm_bf16.1xDx32.64(%{{.*}}: tensor<1x?x32xbf16>, %{{.*}}: tensor<64x32xbf16>) -> tensor<1x?x64xf32>
// CHECK: tensor.collapse_shape
// CHECK: flow.dispatch @qmlir.gemm_bf16.1xDx32.64$x_executable::@qmlir.gemm_bf16.1xDx32.64$x
// CHECK: flow.dispatch @qmlir.gemm_bf16.1xDx32.64$gemm_executable::@qmlir.gemm_bf16.1xDx32.64$gemm
// CHECK: tensor.expand_shape
// CHECK: func.func private @qmlir.gemm_bf16.3x32.64.rounded(%{{.*}}: tensor<3x32xbf16>, %{{.*}}: tensor<64x32xbf16>) -> tensor<3x64xbf16>
// CHECK: %{{.*}}:2 = flow.dispatch @qmlir.gemm_bf16.3x32.64.rounded$gemm_executable::@qmlir.gemm_bf16.3x32.64.rounded$gemm{{.*}} -> (tensor<?x4x16x16xf32>{%{{.*}}}, tensor<?x64xbf16>{%{{.*}}})
func.func @main(%x: !torch.vtensor<[1,?,32],bf16>, %x3: !torch.vtensor<[3,32],bf16>, %x1: !torch.vtensor<[1,32],bf16>, %x24: !torch.vtensor<[3,24],bf16>, %xf: !torch.vtensor<[3,32],f32>, %act: !torch.vtensor<[64,32],bf16>) -> (!torch.vtensor<[1,?,64],bf16>, !torch.vtensor<[3,64],bf16>, !torch.vtensor<[1,64],bf16>, !torch.vtensor<[3,64],bf16>, !torch.vtensor<[3,8],bf16>, !torch.vtensor<[3,64],f32>, !torch.vtensor<[3,64],bf16>) {
  %w = torch.vtensor.literal(dense<1.0> : tensor<64x32xbf16>) : !torch.vtensor<[64,32],bf16>
  %b = torch.vtensor.literal(dense<0.5> : tensor<64xbf16>) : !torch.vtensor<[64],bf16>
  %none = torch.constant.none
  %y = torch.aten.linear %x, %w, %b : !torch.vtensor<[1,?,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.vtensor<[64],bf16> -> !torch.vtensor<[1,?,64],bf16>
  %y3 = torch.aten.linear %x3, %w, %none : !torch.vtensor<[3,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.none -> !torch.vtensor<[3,64],bf16>
  %y1 = torch.aten.linear %x1, %w, %none : !torch.vtensor<[1,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.none -> !torch.vtensor<[1,64],bf16>
  %w24 = torch.vtensor.literal(dense<1.0> : tensor<64x24xbf16>) : !torch.vtensor<[64,24],bf16>
  %y24 = torch.aten.linear %x24, %w24, %none : !torch.vtensor<[3,24],bf16>, !torch.vtensor<[64,24],bf16>, !torch.none -> !torch.vtensor<[3,64],bf16>
  %w8 = torch.vtensor.literal(dense<1.0> : tensor<8x32xbf16>) : !torch.vtensor<[8,32],bf16>
  %y8 = torch.aten.linear %x3, %w8, %none : !torch.vtensor<[3,32],bf16>, !torch.vtensor<[8,32],bf16>, !torch.none -> !torch.vtensor<[3,8],bf16>
  %wf = torch.vtensor.literal(dense<1.0> : tensor<64x32xf32>) : !torch.vtensor<[64,32],f32>
  %yf = torch.aten.linear %xf, %wf, %none : !torch.vtensor<[3,32],f32>, !torch.vtensor<[64,32],f32>, !torch.none -> !torch.vtensor<[3,64],f32>
  %ya = torch.aten.linear %x3, %act, %none : !torch.vtensor<[3,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.none -> !torch.vtensor<[3,64],bf16>
  return %y, %y3, %y1, %y24, %y8, %yf, %ya : !torch.vtensor<[1,?,64],bf16>, !torch.vtensor<[3,64],bf16>, !torch.vtensor<[1,64],bf16>, !torch.vtensor<[3,64],bf16>, !torch.vtensor<[3,8],bf16>, !torch.vtensor<[3,64],f32>, !torch.vtensor<[3,64],bf16>
}
