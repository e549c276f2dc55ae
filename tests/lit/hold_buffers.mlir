// hold-buffers: the buffers a model mutates become module globals without initial values (the
// runtime sets them: IREE 3.13 gives mutable globals with equal initial values one storage);
// @main loads them in place of its first arguments, stores its first results into them (by
// name: the results come in another order), and takes and returns the rest; public functions
// get, set and give the initial values (none here: the lit run gives none, so all are zeros).
// RUN: %qmlir-opt -p 'hold-buffers{loaded=cache,count stored=count,cache}' %S/inputs/mutated_buffers.mlir | FileCheck %s
// RUN: not %qmlir-opt -p 'hold-buffers{loaded=cache stored=count}' %S/inputs/mutated_buffers.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %qmlir-opt -p 'hold-buffers{loaded=a,b,c,d,e stored=a}' %S/inputs/mutated_buffers.mlir 2>&1 | FileCheck %s --check-prefix=COUNT

// UNKNOWN: error: buffer 'count' is stored but never loaded
// COUNT: error: @main has 4 arguments and 3 results, fewer than its 5 and 1 buffers

// CHECK: util.global private mutable @qmlir.buffer.cache {qmlir.buffer = {name = "cache"}} : tensor<1x8x4xf32>
// CHECK-NEXT: util.global private mutable @qmlir.buffer.count {qmlir.buffer = {name = "count"}} : tensor<i64>
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[1,2,4],f32>, %arg1: !torch.vtensor<[2],si64>) -> !torch.vtensor<[1,2,4],f32>
// CHECK: %[[C:.*]] = util.global.load @qmlir.buffer.cache : tensor<1x8x4xf32>
// CHECK-NEXT: %[[CV:.*]] = torch_c.from_builtin_tensor %[[C]] : tensor<1x8x4xf32> -> !torch.vtensor<[1,8,4],f32>
// CHECK-NEXT: %[[N:.*]] = util.global.load @qmlir.buffer.count : tensor<i64>
// CHECK-NEXT: %[[NV:.*]] = torch_c.from_builtin_tensor %[[N]] : tensor<i64> -> !torch.vtensor<[],si64>
// CHECK: %[[N2:.*]] = torch.aten.add.Scalar %[[NV]]
// CHECK: %[[C2:.*]] = torch.aten.index_put %[[CV]], %{{.*}}, %arg0
// CHECK: %[[OUT:.*]] = torch.aten.mul.Tensor %arg0, %arg0
// CHECK-NEXT: %[[N3:.*]] = torch_c.to_builtin_tensor %[[N2]] : !torch.vtensor<[],si64> -> tensor<i64>
// CHECK-NEXT: util.global.store %[[N3]], @qmlir.buffer.count : tensor<i64>
// CHECK-NEXT: %[[C3:.*]] = torch_c.to_builtin_tensor %[[C2]] : !torch.vtensor<[1,8,4],f32> -> tensor<1x8x4xf32>
// CHECK-NEXT: util.global.store %[[C3]], @qmlir.buffer.cache : tensor<1x8x4xf32>
// CHECK-NEXT: return %[[OUT]] : !torch.vtensor<[1,2,4],f32>
// CHECK-LABEL: func.func @qmlir.get_buffers() -> (tensor<1x8x4xf32>, tensor<i64>)
// CHECK-LABEL: func.func @qmlir.set_buffers(%arg0: tensor<1x8x4xf32>, %arg1: tensor<i64>)
// CHECK-NEXT: util.global.store %arg0, @qmlir.buffer.cache
// CHECK-NEXT: util.global.store %arg1, @qmlir.buffer.count
// CHECK-LABEL: func.func @qmlir.initial_buffers() {
// CHECK-NEXT: return
