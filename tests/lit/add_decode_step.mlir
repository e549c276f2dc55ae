// RUN: %qmlir-opt -p add-decode-step %s | FileCheck %s
// RUN: not %qmlir-opt -p 'add-decode-step{arg=1}' %s 2>&1 | FileCheck %s --check-prefix=NODYN

// A generator's @main takes any number of tokens; @decode is its copy with one token a call,
// every shape that follows from that 1 static (torch-mlir's shape refinement), @main as it was.
// The weight (a placeholder naming a tensor held outside) is read as it is, not folded into
// zeros, and the result keeps @main's type through a cast.

// CHECK-LABEL: func.func @main(%{{.*}}: !torch.vtensor<[1,?],si64>, %{{.*}}: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,?,8],f32>
// CHECK: torch.aten.embedding {{.*}} -> !torch.vtensor<[1,?,8],f32>
// CHECK: torch.aten.mul.Tensor {{.*}} -> !torch.vtensor<[1,?,8],f32>

// CHECK: func.func @decode(%[[IDS:.*]]: !torch.vtensor<[1,1],si64>, %{{.*}}: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,?,8],f32>
// CHECK: %[[W:.*]] = torch.vtensor.literal(dense<0.000000e+00> : tensor<16x8xf32>) {qmlir.parameter = "embed.weight"}
// CHECK-NOT: ?
// CHECK: %[[E:.*]] = torch.aten.embedding %[[W]], %[[IDS]], {{.*}} -> !torch.vtensor<[1,1,8],f32>
// CHECK-NOT: ?
// CHECK: %[[M:.*]] = torch.aten.mul.Tensor %[[E]], %[[E]] : {{.*}} -> !torch.vtensor<[1,1,8],f32>
// CHECK-NEXT: %[[C:.*]] = torch.tensor_static_info_cast %[[M]] : !torch.vtensor<[1,1,8],f32> to !torch.vtensor<[1,?,8],f32>
// CHECK-NEXT: return %[[C]]

// The tokens must be a dynamic dim of the argument.
// NODYN: has no dynamic dim 1

func.func @main(%arg0: !torch.vtensor<[1,?],si64>, %arg1: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,?,8],f32> {
  %w = torch.vtensor.literal(dense<0.0> : tensor<16x8xf32>) {qmlir.parameter = "embed.weight"} : !torch.vtensor<[16,8],f32>
  %int-1 = torch.constant.int -1
  %false = torch.constant.bool false
  %0 = torch.aten.embedding %w, %arg0, %int-1, %false, %false : !torch.vtensor<[16,8],f32>, !torch.vtensor<[1,?],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,?,8],f32>
  %1 = torch.aten.mul.Tensor %0, %0 : !torch.vtensor<[1,?,8],f32>, !torch.vtensor<[1,?,8],f32> -> !torch.vtensor<[1,?,8],f32>
  return %1 : !torch.vtensor<[1,?,8],f32>
}
