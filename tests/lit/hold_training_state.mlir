// hold-training-state: the step's parameters and optimizer state (SGD's momentum buffers here)
// become module globals (zeros: the lit run gives no initial values); @main takes the inputs,
// returns the loss and stores the gradients; @qmlir.apply_update reads parameters, gradients
// and momentum and stores the new ones; public functions move the state in and out.
// RUN: %qmlir-opt -p 'hold-training-state{state=l1.weight,l1.bias,l2.weight,sgd.momentum_buffer.l1.weight,sgd.momentum_buffer.l1.bias,sgd.momentum_buffer.l2.weight gradients=l1.weight,l1.bias,l2.weight}' %S/inputs/training_step.mlir | FileCheck %s
// RUN: not %qmlir-opt -p 'hold-training-state{state=l1.weight,l1.bias gradients=l1.weight,l1.bias}' %S/inputs/training_step.mlir 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not %qmlir-opt -p 'hold-training-state{state=a,b gradients=b}' %S/inputs/training_step.mlir 2>&1 | FileCheck %s --check-prefix=ORDER

// ERR: error: @main has 5 arguments and 4 results, not the training step's 2+ and 3
// ORDER: error: the training state must begin with the parameters, in order

// CHECK: util.global private mutable @qmlir.train.l1.weight {qmlir.train = {kind = "state", name = "l1.weight"}} = dense<0.000000e+00> : tensor<32x64xf32>
// CHECK: util.global private mutable @qmlir.train.sgd.momentum_buffer.l2.weight {{.*}} : tensor<16x32xf32>
// CHECK: util.global private mutable @qmlir.grad.l1.weight {qmlir.train = {kind = "gradient", name = "l1.weight"}} = dense<0.000000e+00> : tensor<32x64xf32>
// CHECK-LABEL: func.func @main(%arg0: !torch.vtensor<[32,64],f32>, %arg1: !torch.vtensor<[32,16],f32>) -> !torch.vtensor<[],f32>
// CHECK: %[[W1:.*]] = util.global.load @qmlir.train.l1.weight : tensor<32x64xf32>
// CHECK: %[[V1:.*]] = torch_c.from_builtin_tensor %[[W1]]
// CHECK: torch.aten.t %[[V1]]
// CHECK: torch.aten.addmm %{{.*}}, %arg0,
// CHECK: %[[G:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[32,64],f32> -> tensor<32x64xf32>
// CHECK-NEXT: util.global.store %[[G]], @qmlir.grad.l1.weight
// CHECK: util.global.store %{{.*}}, @qmlir.grad.l2.weight : tensor<16x32xf32>
// CHECK-NEXT: return %{{.*}} : !torch.vtensor<[],f32>
// CHECK-LABEL: func.func @qmlir.apply_update() {
// CHECK: util.global.load @qmlir.train.l1.weight
// CHECK: util.global.load @qmlir.grad.l1.weight
// CHECK: util.global.load @qmlir.train.sgd.momentum_buffer.l1.weight
// CHECK: util.global.store %{{.*}}, @qmlir.train.l1.weight
// CHECK: util.global.store %{{.*}}, @qmlir.train.sgd.momentum_buffer.l2.weight
// CHECK-NEXT: return
// CHECK-LABEL: func.func @qmlir.get_train_state() -> (tensor<32x64xf32>, tensor<32xf32>, tensor<16x32xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<16x32xf32>)
// CHECK-LABEL: func.func @qmlir.set_train_state(%arg0: tensor<32x64xf32>
// CHECK-NEXT: util.global.store %arg0, @qmlir.train.l1.weight
// CHECK-LABEL: func.func @qmlir.get_gradients() -> (tensor<32x64xf32>, tensor<32xf32>, tensor<16x32xf32>)
// CHECK-NEXT: util.global.load @qmlir.grad.l1.weight
