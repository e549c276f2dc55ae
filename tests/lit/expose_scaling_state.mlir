// expose-scaling-state: public functions that read and write every global tagged qmlir.state,
// in module order; a module without state is left as it is.
// RUN: %qmlir-opt -p expose-scaling-state %s | FileCheck %s
// RUN: %qmlir-opt -p expose-scaling-state %S/inputs/stateless.mlir | FileCheck %s --check-prefix=NONE

// CHECK: util.global private mutable @qmlir.state.fc.amax_history
// CHECK: util.global private mutable @qmlir.state.fc.scale
// CHECK: util.global private mutable @other
// CHECK-LABEL: func.func @main
// CHECK-LABEL: func.func @qmlir.get_scaling_state() -> (tensor<4xf32>, tensor<f32>)
// CHECK-NEXT: %[[H:.*]] = util.global.load @qmlir.state.fc.amax_history : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = util.global.load @qmlir.state.fc.scale : tensor<f32>
// CHECK-NEXT: return %[[H]], %[[S]] : tensor<4xf32>, tensor<f32>
// CHECK-LABEL: func.func @qmlir.set_scaling_state(%arg0: tensor<4xf32>, %arg1: tensor<f32>)
// CHECK-NEXT: util.global.store %arg0, @qmlir.state.fc.amax_history : tensor<4xf32>
// CHECK-NEXT: util.global.store %arg1, @qmlir.state.fc.scale : tensor<f32>
// CHECK-NEXT: return
// CHECK-NOT: @other

// NONE-NOT: qmlir.get_scaling_state
// NONE-NOT: qmlir.set_scaling_state

module {
  util.global private mutable @qmlir.state.fc.amax_history {qmlir.state = {key = "fc", kind = "amax_history", layer = "fc"}} = dense<0.0> : tensor<4xf32>
  util.global private mutable @qmlir.state.fc.scale {qmlir.state = {key = "fc", kind = "scale", layer = "fc"}} = dense<1.0> : tensor<f32>
  util.global private mutable @other = dense<2.0> : tensor<f32>
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    %s = util.global.load @qmlir.state.fc.scale : tensor<f32>
    return %s : tensor<f32>
  }
}
