// RUN: %qmlir-opt -p fold-weight-views %s | FileCheck %s
// RUN: %qmlir-opt -p fold-weight-views -p 'quantize-matmuls{recipe=fp8-current}' %s | FileCheck %s --check-prefix=QUANT

// A weight reached through shape-only ops (here x @ w.t(), as einsum's decomposition and
// hand-written code give it) becomes a literal of the view's values: the transpose is done at
// compile time, and the recipe pass then quantizes the matmul as a weight matmul.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: torch.aten.t
// CHECK: %[[W:.*]] = torch.vtensor.literal(dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>) : !torch.vtensor<[3,2],f32>
// CHECK-NEXT: torch.aten.mm %arg0, %[[W]]
// QUANT-LABEL: func.func @transposed
// QUANT: call @qmlir.scaled_matmul.{{.*}}.nn.4x3.3x2(
// QUANT-NOT: kept_high_precision
func.func @transposed(%x: !torch.vtensor<[4,3],f32>) -> !torch.vtensor<[4,2],f32> {
  %w = torch.vtensor.literal(dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %wt = torch.aten.t %w : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[3,2],f32>
  %0 = torch.aten.mm %x, %wt : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[4,2],f32>
  return %0 : !torch.vtensor<[4,2],f32>
}

// A chain (einsum's unsqueeze, permute, view) folds op by op into one literal; the original
// literal is gone once nothing reads it.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: torch.aten.permute
// CHECK-NOT: torch.aten.view
// CHECK: %[[C:.*]] = torch.vtensor.literal(dense<{{\[}}{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]]> : tensor<1x3x2xf32>) : !torch.vtensor<[1,3,2],f32>
// CHECK-NEXT: torch.aten.bmm %arg0, %[[C]]
func.func @chain(%x: !torch.vtensor<[1,4,3],f32>) -> !torch.vtensor<[1,4,2],f32> {
  %w = torch.vtensor.literal(dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %int2 = torch.constant.int 2
  %u = torch.aten.unsqueeze %w, %int2 : !torch.vtensor<[2,3],f32>, !torch.int -> !torch.vtensor<[2,3,1],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %perm = torch.prim.ListConstruct %int2, %int1, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %p = torch.aten.permute %u, %perm : !torch.vtensor<[2,3,1],f32>, !torch.list<int> -> !torch.vtensor<[1,3,2],f32>
  %int3 = torch.constant.int 3
  %shape = torch.prim.ListConstruct %int1, %int3, %int2 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %p, %shape : !torch.vtensor<[1,3,2],f32>, !torch.list<int> -> !torch.vtensor<[1,3,2],f32>
  %0 = torch.aten.bmm %x, %v : !torch.vtensor<[1,4,3],f32>, !torch.vtensor<[1,3,2],f32> -> !torch.vtensor<[1,4,2],f32>
  return %0 : !torch.vtensor<[1,4,2],f32>
}

// The literal stays where something else reads it (the folded copy is the matmul's); a view of
// an activation is left as it is.
// CHECK-LABEL: func.func @shared
// CHECK: %[[ORIG:.*]] = torch.vtensor.literal(dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>)
// CHECK: %[[T:.*]] = torch.vtensor.literal({{.*}} : tensor<3x2xf32>)
// CHECK: torch.aten.mm %arg0, %[[T]]
// CHECK: torch.aten.transpose.int %arg1
// CHECK: torch.aten.add.Tensor %[[ORIG]]
func.func @shared(%x: !torch.vtensor<[4,3],f32>, %y: !torch.vtensor<[3,2],f32>) -> (!torch.vtensor<[4,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>) {
  %w = torch.vtensor.literal(dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>) : !torch.vtensor<[2,3],f32>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %wt = torch.aten.transpose.int %w, %int0, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,2],f32>
  %0 = torch.aten.mm %x, %wt : !torch.vtensor<[4,3],f32>, !torch.vtensor<[3,2],f32> -> !torch.vtensor<[4,2],f32>
  %yt = torch.aten.transpose.int %y, %int0, %int1 : !torch.vtensor<[3,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.add.Tensor %w, %yt, %int1 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>, !torch.int -> !torch.vtensor<[2,3],f32>
  return %0, %yt, %1 : !torch.vtensor<[4,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>
}

// One expert's matrix of a mixture-of-experts weight [experts, out, in] (select.int of the
// leading dim at a constant index, compiler/frontend/moe.py) is a weight of its own, and the
// recipe quantizes the linear that reads it; a negative index counts from the end; a select of
// another dim is left as it is.
// CHECK-LABEL: func.func @expert
// CHECK-NOT: torch.aten.select.int {{.*}}, %int0,
// CHECK: %[[W1:.*]] = torch.vtensor.literal(dense<{{\[}}[5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
// CHECK-NEXT: torch.aten.linear %arg0, %[[W1]]
// CHECK: %[[W0:.*]] = torch.vtensor.literal(dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
// CHECK-NEXT: torch.aten.linear %arg0, %[[W0]]
// CHECK: torch.aten.select.int %{{.*}}, %int1
// QUANT-LABEL: func.func @expert
// QUANT-COUNT-2: call @qmlir.scaled_matmul
func.func @expert(%x: !torch.vtensor<[3,2],f32>) -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[2,2],f32>) {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>) : !torch.vtensor<[2,2,2],f32>
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %intm2 = torch.constant.int -2
  %w1 = torch.aten.select.int %w, %int0, %int1 : !torch.vtensor<[2,2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %0 = torch.aten.linear %x, %w1, %none : !torch.vtensor<[3,2],f32>, !torch.vtensor<[2,2],f32>, !torch.none -> !torch.vtensor<[3,2],f32>
  %w0 = torch.aten.select.int %w, %int0, %intm2 : !torch.vtensor<[2,2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  %1 = torch.aten.linear %x, %w0, %none : !torch.vtensor<[3,2],f32>, !torch.vtensor<[2,2],f32>, !torch.none -> !torch.vtensor<[3,2],f32>
  %other = torch.aten.select.int %w, %int1, %int0 : !torch.vtensor<[2,2,2],f32>, !torch.int, !torch.int -> !torch.vtensor<[2,2],f32>
  return %0, %1, %other : !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[2,2],f32>
}
