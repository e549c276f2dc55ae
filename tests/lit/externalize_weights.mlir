// RUN: %qmlir-opt -p fold-weight-views -p 'quantize-matmuls{recipe=fp8-current}' -p fold-constant-quantize -p externalize-weights %s | FileCheck %s

// Weights held outside the IR (placeholder literals naming a state-dict tensor): the quantize of
// each weight is planned, not run, and its codes and scale_inv become parameters named after
// it (a weight reached through views: its steps in the name, the plan applies them); fc1's bias
// becomes a parameter holding the tensor as it is.

// CHECK-DAG: util.global private @[[BIAS:__qmlir_param_[0-9]+]] = #flow.parameter.named<"model"::"fc1.bias"> : tensor<32xf32>
// CHECK-DAG: util.global private @[[SCALE:__qmlir_param_[0-9]+]] = #flow.parameter.named<"model"::"fc1.weight:1"> : tensor<f32>
// CHECK-DAG: util.global private @[[CODES:__qmlir_param_[0-9]+]] = #flow.parameter.named<"model"::"fc1.weight:0"> : tensor<32x64xi8>
// CHECK-DAG: util.global private @[[VIEW:__qmlir_param_[0-9]+]] = #flow.parameter.named<"model"::"proj/permute(1,0)/reshape(16,32)/permute(1,0)/reshape(32,16):0"> : tensor<32x16xi8>
// CHECK-LABEL: func.func @main
// CHECK-NOT: torch.vtensor.literal
// CHECK-DAG: util.global.load @[[CODES]] : tensor<32x64xi8>
// CHECK-DAG: util.global.load @[[SCALE]] : tensor<f32>
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.8x64.32x64(
// CHECK-SAME: {qmlir.layer = "fc1"
// CHECK: %[[V:.*]] = util.global.load @[[VIEW]] : tensor<32x16xi8>
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nn.8x32.32x16(%{{.*}}, %{{.*}}, %[[V]],
// the weights' own quantize calls are gone: their declarations with them
// CHECK-NOT: func.func private @qmlir.amax.32x64
// CHECK-NOT: func.func private @qmlir.quantize.e4m3.per_tensor.32x64

module {
  func.func @main(%arg0: !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[8,16],f32> {
    %0 = torch.vtensor.literal(dense<0.000000e+00> : tensor<32x64xf32>) {qmlir.parameter = "fc1.weight"} : !torch.vtensor<[32,64],f32> loc(#fc1)
    %1 = torch.vtensor.literal(dense<0.000000e+00> : tensor<32xf32>) {qmlir.parameter = "fc1.bias"} : !torch.vtensor<[32],f32> loc(#fc1)
    %2 = torch.aten.linear %arg0, %0, %1 : !torch.vtensor<[8,64],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32> -> !torch.vtensor<[8,32],f32> loc(#fc1)
    %3 = torch.vtensor.literal(dense<0.000000e+00> : tensor<32x16xf32>) {qmlir.parameter = "proj"} : !torch.vtensor<[32,16],f32> loc(#proj)
    %4 = torch.aten.t %3 : !torch.vtensor<[32,16],f32> -> !torch.vtensor<[16,32],f32> loc(#proj)
    %5 = torch.aten.t %4 : !torch.vtensor<[16,32],f32> -> !torch.vtensor<[32,16],f32> loc(#proj)
    %6 = torch.aten.mm %2, %5 : !torch.vtensor<[8,32],f32>, !torch.vtensor<[32,16],f32> -> !torch.vtensor<[8,16],f32> loc(#proj)
    return %6 : !torch.vtensor<[8,16],f32>
  }
}
#fc1 = loc("fc1")
#proj = loc("proj")
