// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' %s | FileCheck %s --check-prefix=BEFORE
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p fold-constant-quantize %s | FileCheck %s

// Before folding, the weight's chain reads like the activation's.
// BEFORE: call @qmlir.amax.3x8
// BEFORE: call @qmlir.quantize.e4m3.per_tensor.3x8

// After: the weight is FP8 codes + its scale_inv, computed by the CPU lowering at compile time.
// Weight row 0 has amax 3, so scale = 448/3: 0.5 -> 74.67 -> 72 = 0x69 (105), -1 -> -149.3 ->
// -144 = 0xF1 (-15 as i8), 2 -> 298.7 -> 288 = 0x79 (121); scale_inv = 3/448.
// CHECK-LABEL: func.func @main
// CHECK-NOT: torch.vtensor.literal(dense<{{.*}}> : tensor<3x8xf32>)
// CHECK: %[[XQ:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.4x8
// CHECK-DAG: %[[WQ:.*]] = arith.constant dense<{{\[\[}}105, -15, 121, 97, 118, -2, 89, 113], [113, 113, 113, 113, 113, 113, 113, 113], [0, 87, 95, 99, 103, 105, 107, 109]]> : tensor<3x8xi8>
// CHECK-DAG: %[[WS:.*]] = arith.constant dense<0.00669642864> : tensor<f32>
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%[[XQ]]#0, %[[XQ]]#1, %[[WQ]], %[[WS]])
// The weight-only declarations are gone; the activation's remain.
// CHECK-NOT: @qmlir.amax.3x8
// CHECK-NOT: @qmlir.quantize.e4m3.per_tensor.3x8
// CHECK: func.func private @qmlir.amax.4x8
module {
  func.func @main(%arg0: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,3],f32> {
    %w = torch.vtensor.literal(dense<[[0.5, -1.0, 2.0, 0.25, 1.5, -3.0, 0.125, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]]> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
    %none = torch.constant.none
    %0 = torch.aten.linear %arg0, %w, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[3,8],f32>, !torch.none -> !torch.vtensor<[4,3],f32> loc("fc1")
    return %0 : !torch.vtensor<[4,3],f32>
  }
}
