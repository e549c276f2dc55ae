// RUN: %qmlir-opt -p widen-bf16-matmuls -p bf16-decode-gemv %s | FileCheck %s

// The decode step's one-row bf16 linear: a call of the matrix-vector product over the bf16
// weight as stored (no widened copy left), its bias added after in f32, then rounded to bf16.
// @main's linear of a dynamic number of rows keeps the widened weight and IREE's GEMM.
// CHECK-LABEL: func.func @main
// CHECK: call @qmlir.widen_bf16.64x32(
// CHECK: torch.aten.linear
// CHECK-LABEL: func.func @decode
// CHECK: %[[W:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<64x32xbf16>)
// CHECK-NOT: call @qmlir.widen_bf16.64x32(
// CHECK-DAG: %[[WB:.*]] = torch_c.to_builtin_tensor %[[W]] : !torch.vtensor<[64,32],bf16> -> tensor<64x32xbf16>
// CHECK-DAG: %[[X:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[1,1,32],f32> -> tensor<1x1x32xf32>
// CHECK: %[[G:.*]] = call @qmlir.gemv_bf16.1x1x32.64(%[[X]], %[[WB]]) : (tensor<1x1x32xf32>, tensor<64x32xbf16>) -> tensor<1x1x64xf32>
// CHECK: %[[GT:.*]] = torch_c.from_builtin_tensor %[[G]] : tensor<1x1x64xf32> -> !torch.vtensor<[1,1,64],f32>
// CHECK: %[[Y:.*]] = torch.aten.add.Tensor %[[GT]], %{{.*}}, %{{.*}} : !torch.vtensor<[1,1,64],f32>, !torch.vtensor<[64],f32>
// CHECK: torch.prims.convert_element_type %[[Y]], %{{.*}} -> !torch.vtensor<[1,1,64],bf16>
// A K that is not a multiple of 32 (a step's 32 weights) keeps the widened GEMM.
// CHECK: call @qmlir.widen_bf16.8x24(
// CHECK: torch.aten.linear
// CHECK-NOT: qmlir.gemv_bf16.1x24
// CHECK: return
// The matrix-vector product: the dispatch, and its executable's loop over the bf16 codes.
// CHECK: stream.executable private @qmlir.gemv_bf16.1x1x32.64$executable
// CHECK: memref<64x32xbf16>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<64x32xbf16>, vector<16xbf16>
// CHECK: arith.extui %{{.*}} : vector<16xi16> to vector<16xi32>
// CHECK: vector.fma
// CHECK: func.func private @qmlir.gemv_bf16.1x1x32.64(
// CHECK: tensor.collapse_shape
// CHECK: flow.dispatch @qmlir.gemv_bf16.1x1x32.64$executable::@qmlir.gemv_bf16.1x1x32.64$gemv
func.func @main(%x: !torch.vtensor<[?,?,32],bf16>) -> !torch.vtensor<[?,?,64],bf16> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<64x32xbf16>) : !torch.vtensor<[64,32],bf16>
  %b = torch.vtensor.literal(dense<0.5> : tensor<64xbf16>) : !torch.vtensor<[64],bf16>
  %y = torch.aten.linear %x, %w, %b : !torch.vtensor<[?,?,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.vtensor<[64],bf16> -> !torch.vtensor<[?,?,64],bf16>
  return %y : !torch.vtensor<[?,?,64],bf16>
}
func.func @decode(%x: !torch.vtensor<[1,1,32],bf16>, %x2: !torch.vtensor<[1,24],bf16>) -> (!torch.vtensor<[1,1,64],bf16>, !torch.vtensor<[1,8],bf16>) {
  %w = torch.vtensor.literal(dense<1.0> : tensor<64x32xbf16>) : !torch.vtensor<[64,32],bf16>
  %b = torch.vtensor.literal(dense<0.5> : tensor<64xbf16>) : !torch.vtensor<[64],bf16>
  %y = torch.aten.linear %x, %w, %b : !torch.vtensor<[1,1,32],bf16>, !torch.vtensor<[64,32],bf16>, !torch.vtensor<[64],bf16> -> !torch.vtensor<[1,1,64],bf16>
  %w2 = torch.vtensor.literal(dense<1.0> : tensor<8x24xbf16>) : !torch.vtensor<[8,24],bf16>
  %none = torch.constant.none
  %y2 = torch.aten.linear %x2, %w2, %none : !torch.vtensor<[1,24],bf16>, !torch.vtensor<[8,24],bf16>, !torch.none -> !torch.vtensor<[1,8],bf16>
  return %y, %y2 : !torch.vtensor<[1,1,64],bf16>, !torch.vtensor<[1,8],bf16>
}

// RUN: %qmlir-opt -p bf16-decode-gemv %s | FileCheck %s --check-prefix=NATIVE
// Without widen-bf16-matmuls (bf16 GEMM operands, an AVX512-BF16 CPU) the one-row bf16 linear
// takes the same product: its activation widened, the bias widened and added to the f32 result,
// the sum rounded to bf16 once (torch's bf16 linear; IREE's GEMM fuses the bias into its sums).
// NATIVE-LABEL: func.func @decode
// NATIVE: %[[W:.*]] = torch.vtensor.literal(dense<1.000000e+00> : tensor<64x32xbf16>)
// NATIVE: %[[B:.*]] = torch.vtensor.literal(dense<5.000000e-01> : tensor<64xbf16>)
// NATIVE-DAG: %[[WB:.*]] = torch_c.to_builtin_tensor %[[W]] : !torch.vtensor<[64,32],bf16> -> tensor<64x32xbf16>
// NATIVE-DAG: %[[XW:.*]] = call @qmlir.widen_bf16.1x1x32(
// NATIVE: %[[G:.*]] = call @qmlir.gemv_bf16.1x1x32.64(%{{.*}}, %[[WB]])
// NATIVE: %[[GT:.*]] = torch_c.from_builtin_tensor %[[G]]
// NATIVE: %[[BF:.*]] = torch.prims.convert_element_type %[[B]], %{{.*}} -> !torch.vtensor<[64],f32>
// NATIVE: %[[S:.*]] = torch.aten.add.Tensor %[[GT]], %[[BF]], %{{.*}} -> !torch.vtensor<[1,1,64],f32>
// NATIVE: torch.prims.convert_element_type %[[S]], %{{.*}} -> !torch.vtensor<[1,1,64],bf16>
// NATIVE: torch.aten.linear %{{.*}} : !torch.vtensor<[1,24],bf16>, !torch.vtensor<[8,24],bf16>, !torch.none -> !torch.vtensor<[1,8],bf16>
