// fuse-quantize-core (the cuda pipeline's): each activation's quantize chain becomes one
// fused_quantize call; the pass needs no NVRTC (the cuda lowering that follows does).
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8 quantize-all-matmuls=true}' -p fold-constant-quantize -p fuse-quantize-core %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block quantize-all-matmuls=true}' -p fold-constant-quantize -p fuse-quantize-core %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-delayed quantize-all-matmuls=true}' -p fold-constant-quantize -p fuse-quantize-core %s | FileCheck %s --check-prefix=DELAYED
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4 quantize-all-matmuls=true}' -p fold-constant-quantize -p fuse-quantize-core %s | FileCheck %s --check-prefix=FP4
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4 scale_order=torchao}' -p fold-constant-quantize -p fuse-quantize-core %s | FileCheck %s --check-prefix=TORCHAO

// x is fc's A operand (rowwise) and act's B operand ([K, N]: columnwise): one kernel writes both.
// MX-LABEL: func.func @main
// MX: %[[X:.*]]:4 = call @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx.rowcol(%{{.*}}) {qmlir.layer = "fc"} : (tensor<8x64xf32>) -> (tensor<8x64xi8>, tensor<512xi8>, tensor<8x64xi8>, tensor<512xi8>)
// MX: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(%[[X]]#0, %[[X]]#1, %cst
// MX: %[[Z:.*]]:2 = call @qmlir.fused_quantize.e4m3.block1x32.e8m0.4x8.mx(
// MX: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.4x8.8x64(%[[Z]]#0, %[[Z]]#1, %[[X]]#2, %[[X]]#3)
// MX-NOT: call @qmlir.amax
// MX-NOT: call @qmlir.quantize
// MX-NOT: call @qmlir.swizzle
// MX: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx.rowcol({{.*}} attributes {qmlir.block = array<i64: 1, 32>, qmlir.format = "e4m3", qmlir.fp8_max = 4.480000e+02 : f32, qmlir.layout = "mx", qmlir.op = "fused_quantize", qmlir.outputs = "rowwise+columnwise", qmlir.rule = "e8m0_ceil", qmlir.scale_format = "e8m0", qmlir.scaling = "block", qmlir.transpose = false}
// MX-NOT: func.func private @qmlir.amax
// MX-NOT: func.func private @qmlir.compute_scale

// BLOCK: %[[X:.*]]:4 = call @qmlir.fused_quantize.e4m3.block1x128.fp32.8x64.block1d.rowcol(
// BLOCK-SAME: -> (tensor<8x64xi8>, tensor<1x8xf32>, tensor<8x64xi8>, tensor<1x64xf32>)
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.8x64.16x64(%[[X]]#0, %[[X]]#1,
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.block1d.nn.4x8.8x64(%{{.*}}#0, %{{.*}}#1, %[[X]]#2, %[[X]]#3)
// BLOCK: qmlir.outputs = "rowwise+columnwise", qmlir.pow2 = true, qmlir.rule = "fp8_block"

// fp8-delayed: the cast with the stored scale and this call's amax, one read of x.
// DELAYED: %[[S:.*]] = util.global.load @qmlir.state.fc.scale
// DELAYED: %[[H:.*]] = util.global.load @qmlir.state.fc.amax_history
// DELAYED: %[[Q:.*]]:3 = call @qmlir.fused_quantize.e4m3.per_tensor.8x64.amax(%{{.*}}, %[[S]]) {qmlir.layer = "fc"} : (tensor<8x64xf32>, tensor<f32>) -> (tensor<8x64xi8>, tensor<f32>, tensor<f32>)
// DELAYED: call @qmlir.amax_history_update.max.m0.e4m3.1024(%[[H]], %[[Q]]#2, %[[S]])
// DELAYED: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.8x64.16x64(%[[Q]]#0, %[[Q]]#1,
// DELAYED-NOT: call @qmlir.amax.
// DELAYED-NOT: call @qmlir.quantize.

// nvfp4 (TE order): the kernel derives S_enc from the global amax; only S_dec stays a call.
// FP4: %[[A:.*]] = call @qmlir.amax.8x64(%[[X:.*]]) {qmlir.layer = "fc"}
// FP4: %[[D:.*]] = call @qmlir.compute_scale.nvfp4_global_decode(%[[A]])
// FP4: %[[Q:.*]]:2 = call @qmlir.fused_quantize.e2m1.block1x16.e4m3.te.8x64.mx(%[[X]], %[[A]])
// FP4: call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32(%[[Q]]#0, %[[Q]]#1, %[[D]],
// FP4-NOT: call @qmlir.compute_scale.nvfp4_global(
// FP4: func.func private @qmlir.compute_scale.nvfp4_global_decode(tensor<f32>) -> tensor<f32> attributes {qmlir.op = "compute_scale", qmlir.rule = "nvfp4_global_decode"}

// torchao order has no kernel: its chain stays as named ops.
// TORCHAO: call @qmlir.compute_scale.nvfp4_global_torchao(
// TORCHAO: call @qmlir.quantize.e2m1.block1x16.e4m3.torchao.8x64(
// TORCHAO-NOT: fused_quantize

func.func @main(%x: !torch.vtensor<[8,64],f32>, %z: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[8,16],f32>, !torch.vtensor<[4,64],f32>) {
  %w = torch.vtensor.literal(dense<0.5> : tensor<16x64xf32>) : !torch.vtensor<[16,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[8,64],f32>, !torch.vtensor<[16,64],f32>, !torch.none -> !torch.vtensor<[8,16],f32> loc("fc")
  %1 = torch.aten.mm %z, %x : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,64],f32> -> !torch.vtensor<[4,64],f32> loc("act")
  return %0, %1 : !torch.vtensor<[8,16],f32>, !torch.vtensor<[4,64],f32>
}
