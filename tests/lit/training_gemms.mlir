// training-gemms on a traced training step (two linears; inputs/training_step.mlir):
// each linear's fprop, dgrad and wgrad, its operands' roles, and the backward GEMMs' layers.
// Then the recipe pass quantizes the three GEMMs of each linear for their roles and usages:
// gradients in E5M2 under hybrid; fp8-block's 128x128 weight tiles, 1x128 gradient blocks
// and columnwise (128x1) x for wgrad; mxfp8's 1x32 / 32x1 blocks; fp8-delayed's state per
// parameter and gradient. fprop's t(W) is quantized as W (rowwise, the GEMM reading it "nt"),
// and a tensor two GEMMs read the same way is cast once: W for fprop and dgrad, x for fprop and
// wgrad (per-tensor recipes; block recipes read x along other dims there).
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' %S/inputs/training_step.mlir | FileCheck %s
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' -p 'quantize-matmuls{recipe=fp8-current fp8_format=hybrid}' %S/inputs/training_step.mlir | FileCheck %s --check-prefix=CURRENT
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' -p 'quantize-matmuls{recipe=fp8-current}' %S/inputs/training_step.mlir | FileCheck %s --check-prefix=E4M3
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' -p 'quantize-matmuls{recipe=fp8-block fp8_format=hybrid}' %S/inputs/training_step.mlir | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' -p 'quantize-matmuls{recipe=mxfp8 fp8_format=hybrid}' %S/inputs/training_step.mlir | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'training-gemms{parameters=l1.weight,l1.bias,l2.weight}' -p 'quantize-matmuls{recipe=fp8-delayed fp8_format=hybrid amax_history_len=4}' %S/inputs/training_step.mlir | FileCheck %s --check-prefix=DELAYED
// RUN: not %qmlir-opt -p "training-gemms{parameters=a,b,c,d}" %S/inputs/training_step.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: @main returns 4 values, not a training step's loss and 4 gradients

// CHECK-LABEL: func.func @main
// CHECK: torch.aten.addmm %arg1, %arg3, %{{.*}} {qmlir.gemm = "fprop", qmlir.operand_roles = ["activation", "weight"]}
// CHECK: torch.aten.mm %{{.*}} {qmlir.gemm = "fprop", qmlir.operand_roles = ["activation", "weight"]} : !torch.vtensor<[32,32],f32>, !torch.vtensor<[32,16],f32>
// CHECK: torch.aten.mm %{{.*}} {qmlir.gemm = "wgrad", qmlir.layer = "l2", qmlir.operand_roles = ["gradient", "activation"]} : !torch.vtensor<[16,32],f32>, !torch.vtensor<[32,32],f32>
// CHECK: torch.aten.mm %{{.*}} {qmlir.gemm = "dgrad", qmlir.layer = "l2", qmlir.operand_roles = ["gradient", "weight"]} : !torch.vtensor<[32,16],f32>, !torch.vtensor<[16,32],f32>
// CHECK: torch.aten.mm %{{.*}}, %arg3 {qmlir.gemm = "wgrad", qmlir.layer = "l1", qmlir.operand_roles = ["gradient", "activation"]}
// CHECK-NOT: qmlir.gemm

// CURRENT-LABEL: func.func @main
// CURRENT: %[[X1:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.32x64(
// CURRENT: %[[W1:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.32x64(
// CURRENT: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.32x64.32x64(%[[X1]]#0, %[[X1]]#1, %[[W1]]#0, %[[W1]]#1) {qmlir.gemm = "fprop", qmlir.layer = "l1"
// CURRENT: %[[H:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.32x32(
// CURRENT: %[[W2:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.16x32(
// CURRENT: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.32x32.16x32(%[[H]]#0, %[[H]]#1, %[[W2]]#0, %[[W2]]#1) {qmlir.gemm = "fprop", qmlir.layer = "l2"
// CURRENT: %[[DYT:.*]]:2 = call @qmlir.quantize.e5m2.per_tensor.16x32(
// CURRENT: call @qmlir.scaled_matmul.e5m2xe4m3.per_tensor.nn.16x32.32x32(%[[DYT]]#0, %[[DYT]]#1, %[[H]]#0, %[[H]]#1) {qmlir.gemm = "wgrad", qmlir.layer = "l2"
// CURRENT: %[[DY:.*]]:2 = call @qmlir.quantize.e5m2.per_tensor.32x16(
// CURRENT-NOT: call @qmlir.quantize.e4m3
// CURRENT: call @qmlir.scaled_matmul.e5m2xe4m3.per_tensor.nn.32x16.16x32(%[[DY]]#0, %[[DY]]#1, %[[W2]]#0, %[[W2]]#1) {qmlir.gemm = "dgrad", qmlir.layer = "l2"
// CURRENT-NOT: call @qmlir.quantize.e4m3
// CURRENT: call @qmlir.scaled_matmul.e5m2xe4m3.per_tensor.nn.32x32.32x64(%{{.*}}, %[[X1]]#0, %[[X1]]#1) {qmlir.gemm = "wgrad", qmlir.layer = "l1"
// CURRENT-DAG: func.func private @qmlir.compute_scale.fp8_per_tensor.e5m2(tensor<f32>) -> tensor<f32> attributes {{{.*}}qmlir.fp8_max = 5.734400e+04 : f32
// CURRENT-DAG: func.func private @qmlir.quantize.e5m2.per_tensor.32x16({{.*}}qmlir.format = "e5m2"

// E4M3-NOT: e5m2

// BLOCK-LABEL: func.func @main
// BLOCK: call @qmlir.quantize.e4m3.block1x128.fp32.32x64(
// BLOCK: call @qmlir.quantize.e4m3.block128x128.fp32.32x64(
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.32x64.32x64({{.*}}qmlir.gemm = "fprop"
// BLOCK: call @qmlir.quantize.e5m2.block1x128.fp32.16x32(
// BLOCK: call @qmlir.quantize.e4m3.block128x1.fp32.32x32(
// BLOCK: call @qmlir.scaled_matmul.e5m2xe4m3.block1d.nn.16x32.32x32({{.*}}qmlir.gemm = "wgrad", qmlir.layer = "l2"
// BLOCK: call @qmlir.quantize.e5m2.block1x128.fp32.32x16(
// BLOCK: call @qmlir.quantize.e4m3.block128x128.fp32.16x32(
// BLOCK: call @qmlir.scaled_matmul.e5m2xe4m3.block1dxblock2d.nn.32x16.16x32({{.*}}qmlir.gemm = "dgrad", qmlir.layer = "l2"

// MX-LABEL: func.func @main
// MX: call @qmlir.quantize.e4m3.block1x32.e8m0.32x64(
// MX: call @qmlir.quantize.e4m3.block1x32.e8m0.32x64(
// MX: call @qmlir.quantize.e5m2.block1x32.e8m0.16x32(
// MX: call @qmlir.quantize.e4m3.block32x1.e8m0.32x32(
// MX: call @qmlir.scaled_matmul.e5m2xe4m3.mx.nn.16x32.32x32({{.*}}qmlir.gemm = "wgrad"
// MX: call @qmlir.quantize.e5m2.block1x32.e8m0.32x16(
// MX: call @qmlir.quantize.e4m3.block32x1.e8m0.16x32(
// MX: call @qmlir.scaled_matmul.e5m2xe4m3.mx.nn.32x16.16x32({{.*}}qmlir.gemm = "dgrad"

// DELAYED-DAG: util.global private mutable @qmlir.state.l1.scale {qmlir.state = {key = "l1", kind = "scale", layer = "l1"}}
// DELAYED-DAG: util.global private mutable @qmlir.state.l1.parameter.scale {qmlir.state = {key = "l1.parameter", kind = "scale", layer = "l1"}}
// DELAYED-DAG: util.global private mutable @qmlir.state.l2.gradient.scale {qmlir.state = {key = "l2.gradient", kind = "scale", layer = "l2"}}
// DELAYED-DAG: util.global private mutable @qmlir.state.l1.gradient.amax_history {qmlir.state = {key = "l1.gradient", kind = "amax_history", layer = "l1"}}
// DELAYED-LABEL: func.func @main
// DELAYED: %[[S:.*]] = util.global.load @qmlir.state.l2.gradient.scale : tensor<f32>
// DELAYED: call @qmlir.quantize.e5m2.per_tensor.16x32(%{{.*}}, %[[S]])
// DELAYED: call @qmlir.amax_history_update.max.m0.e5m2.4(
