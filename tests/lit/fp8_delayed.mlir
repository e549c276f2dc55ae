// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed amax_history_len=16 margin=1}' -p expose-scaling-state %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed amax_history_len=16 margin=1}' -p expose-scaling-state -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=LOWER
// RUN: not %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed margin=-1}' %s 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed amax_history_len=16 skip_non_finite_amax=true amax_outlier_factor=100}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=SAFE
// RUN: not %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed amax_outlier_factor=0.5}' %s 2>&1 | FileCheck %s --check-prefix=ERR-FACTOR

// ERR: error: option 'margin' of recipe 'fp8-delayed' must be in 0..100

// ERR-FACTOR: error: option 'amax_outlier_factor' of recipe 'fp8-delayed' must be 0 (off) or a finite number >= 1, not 0.5

// The outlier options: their own variant; the recorded amax is 0 where rejected (F = 100 in f64).
// SAFE: call @qmlir.amax_history_update.max.m0.e4m3.skipnf.out4059000000000000.16(
// SAFE-LABEL: func.func private @qmlir.amax_history_update.max.m0.e4m3.skipnf.out4059000000000000.16(
// SAFE-SAME: qmlir.outlier_factor = 1.000000e+02 : f64, qmlir.skip_non_finite = true
// SAFE: arith.constant true
// SAFE: arith.constant 1.000000e+02 : f64
// SAFE: arith.mulf %{{.*}}, %{{.*}} : f64
// SAFE: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32

// The activation's state: a history of zeros and a scale of 1, as module globals in model order.
// CHECK: util.global private mutable @qmlir.state.fc1.amax_history {qmlir.state = {key = "fc1", kind = "amax_history", layer = "fc1"}} = dense<0.000000e+00> : tensor<16xf32>
// CHECK: util.global private mutable @qmlir.state.fc1.scale {{.*}} = dense<1.000000e+00> : tensor<f32>
// CHECK: util.global private mutable @qmlir.state.fc2.amax_history

// One call = one step: quantize with the stored scale, record amax, update, store back.
// CHECK-LABEL: func.func @main
// CHECK: %[[SCALE:.*]] = util.global.load @qmlir.state.fc1.scale : tensor<f32>
// CHECK: %[[HIST:.*]] = util.global.load @qmlir.state.fc1.amax_history : tensor<16xf32>
// CHECK: %[[AMAX:.*]] = call @qmlir.amax.4x8(%[[X:[0-9a-z_]+]])
// CHECK: %[[Q:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.4x8(%[[X]], %[[SCALE]])
// CHECK: %[[UPD:.*]]:2 = call @qmlir.amax_history_update.max.m1.e4m3.16(%[[HIST]], %[[AMAX]], %[[SCALE]])
// CHECK: util.global.store %[[UPD]]#0, @qmlir.state.fc1.amax_history
// CHECK: util.global.store %[[UPD]]#1, @qmlir.state.fc1.scale
// The weight is a constant: current scaling (its own amax and compute_scale), no state.
// CHECK: call @qmlir.amax.8x8
// CHECK: call @qmlir.compute_scale.fp8_per_tensor.e4m3
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.8x8(%[[Q]]#0, %[[Q]]#1

// The state is readable and writable from outside, in the globals' order.
// CHECK-LABEL: func.func @qmlir.get_scaling_state() -> (tensor<16xf32>, tensor<f32>, tensor<16xf32>, tensor<f32>)
// CHECK-LABEL: func.func @qmlir.set_scaling_state(
// CHECK: util.global.store %arg0, @qmlir.state.fc1.amax_history
// CHECK: util.global.store %arg1, @qmlir.state.fc1.scale

// The update: max over the old slots 1.. (bits), the scale's margin as a multiply by 2^-1, the roll.
// LOWER-LABEL: func.func private @qmlir.amax_history_update.max.m1.e4m3.16(
// LOWER: arith.maxui
// LOWER: %{{.*}} = arith.constant 5.000000e-01 : f32
// LOWER: arith.divf
// LOWER: arith.remui
// LOWER: tensor.extract %arg0
module {
  func.func @main(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,3],f32> {
    %w1 = torch.vtensor.literal(dense<0.5> : tensor<8x8xf32>) : !torch.vtensor<[8,8],f32>
    %w2 = torch.vtensor.literal(dense<0.25> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
    %none = torch.constant.none
    %0 = torch.aten.linear %x, %w1, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,8],f32>, !torch.none -> !torch.vtensor<[4,8],f32> loc("fc1")
    %1 = torch.aten.linear %0, %w2, %none : !torch.vtensor<[4,8],f32>, !torch.vtensor<[3,8],f32>, !torch.none -> !torch.vtensor<[4,3],f32> loc("fc2")
    return %1 : !torch.vtensor<[4,3],f32>
  }
}
