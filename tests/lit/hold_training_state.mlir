// hold-training-state: the step's parameters and optimizer state become module globals (zeros
// here: the lit run gives no initial values), @main takes the inputs and returns the loss,
// stores each new value and each gradient back, and public functions move the state.
// RUN: %qmlir-opt -p 'hold-training-state{state=l1.weight,l1.bias,l2.weight gradients=l1.weight,l1.bias,l2.weight}' %S/inputs/training_step.mlir | FileCheck %s
// RUN: not %qmlir-opt -p 'hold-training-state{state=a,b gradients=a,b,c}' %S/inputs/training_step.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: @main has 5 arguments and 7 results: a training step with 2 state entries and 3 gradients returns 6

// CHECK: util.global private mutable @qmlir.train.l1.weight {qmlir.train = {kind = "state", name = "l1.weight"}} = dense<0.000000e+00> : tensor<32x64xf32>
// CHECK: util.global private mutable @qmlir.train.l1.bias
// CHECK: util.global private mutable @qmlir.train.l2.weight
// CHECK: util.global private mutable @qmlir.grad.l1.weight {qmlir.train = {kind = "gradient", name = "l1.weight"}} = dense<0.000000e+00> : tensor<32x64xf32>
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[32,64],f32>, %arg1: !torch.vtensor<[32,16],f32>) -> !torch.vtensor<[],f32>
// CHECK: %[[W1:.*]] = util.global.load @qmlir.train.l1.weight : tensor<32x64xf32>
// CHECK: %[[V1:.*]] = torch_c.from_builtin_tensor %[[W1]]
// CHECK: torch.aten.t %[[V1]]
// CHECK: torch.aten.addmm %{{.*}}, %arg0,
// CHECK: %[[NEW:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[32,64],f32> -> tensor<32x64xf32>
// CHECK-NEXT: util.global.store %[[NEW]], @qmlir.train.l1.weight
// CHECK: util.global.store %{{.*}}, @qmlir.grad.l2.weight : tensor<16x32xf32>
// CHECK-NEXT: return %{{.*}} : !torch.vtensor<[],f32>
// CHECK-LABEL: func.func @qmlir.get_train_state() -> (tensor<32x64xf32>, tensor<32xf32>, tensor<16x32xf32>)
// CHECK-LABEL: func.func @qmlir.get_gradients() -> (tensor<32x64xf32>, tensor<32xf32>, tensor<16x32xf32>)
// CHECK-LABEL: func.func @qmlir.set_train_state(%arg0: tensor<32x64xf32>, %arg1: tensor<32xf32>, %arg2: tensor<16x32xf32>)
// CHECK-NEXT: util.global.store %arg0, @qmlir.train.l1.weight
