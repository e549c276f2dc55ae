// REQUIRES: nvrtc
// RUN: %qmlir-opt -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s
// RUN: %qmlir-opt -p fuse-quantize-core %s | FileCheck %s --check-prefix=FUSE
// RUN: %qmlir-opt -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_100}' %s | FileCheck %s --check-prefix=MX
// RUN: not %qmlir-opt -p 'lower-named-ops{target=cuda cuda-arch=sm_75}' %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: unknown CUDA architecture 'sm_75' (known: sm_89, sm_90, sm_100)

// Per tensor: amax, the scale, the cast and the GEMM become calls into runtime_kernels' PTX
// (embedded as the object's data), the tensors flattened to what the kernels take.
// CHECK-DAG: #[[TARGET:.*]] = #hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_90"
// CHECK-DAG: #[[AMAX_LAYOUT:.*]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// CHECK-LABEL: func.func private @qmlir.amax.4x8(
// CHECK-SAME: attributes {qmlir.op = "amax"}
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: hal.dispatch.extern "qmlir_amax_f32"(%[[FLAT]], %[[ZERO]], %{{.*}}) : (tensor<32xf32>, tensor<f32>, i32) -> %[[ZERO]]
// CHECK: layout(#[[AMAX_LAYOUT]]) objects({
// CHECK-NEXT: #[[TARGET]] ordinal(0) = [#hal.executable.object<{path = "per_tensor.sm_90.ptx", data =

// CHECK-LABEL: func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(
// CHECK: hal.dispatch.extern "qmlir_fp8_scale_from_amax"

// CHECK-LABEL: func.func private @qmlir.quantize.e4m3.per_tensor.4x8(
// CHECK: %[[Q:.*]]:2 = hal.dispatch.extern "qmlir_quantize_fp8_e4m3"({{.*}}) : (tensor<32xf32>, tensor<f32>, i32) -> (tensor<32xi8>, tensor<f32>)
// CHECK: tensor.expand_shape %[[Q]]#0 {{\[\[}}0, 1]] output_shape [4, 8] : tensor<32xi8> into tensor<4x8xi8>

// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(
// CHECK: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor"
// CHECK-SAME: -> tensor<4x3xf32>
// CHECK: <workgroup_size = [128 : index, 1 : index, 1 : index]>

// The block chain amax → compute_scale → quantize → swizzle becomes one fused named op ...
// FUSE-LABEL: func.func @block
// FUSE-NEXT: %[[F:.*]]:2 = call @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(%arg0) : (tensor<8x64xf32>) -> (tensor<8x64xi8>, tensor<512xi8>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(%[[F]]#0, %[[F]]#1, %arg1, %arg2)
// FUSE-NOT: @qmlir.amax.block1x32.8x64(
// FUSE-NOT: @qmlir.swizzle.mx.n.8x2(
// FUSE: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(tensor<8x64xf32>) -> (tensor<8x64xi8>, tensor<512xi8>)
// FUSE-SAME: qmlir.layout = "mx", qmlir.op = "fused_quantize", qmlir.rule = "e8m0_ceil"

// ... which lowers to the fused kernel (scales written swizzled); the GEMM to the MXFP8 kernel.
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8"
// MX-LABEL: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(
// MX: %[[Q:.*]]:2 = hal.dispatch.extern "qmlir_quantize_mxfp8_rowwise"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<8x64xf32>, i32, i32, i32) -> (tensor<8x64xi8>, tensor<512xi8>)
// MX: ordinal(0) = [#hal.executable.object<{path = "mxfp8.sm_100.ptx"
// MX: return %[[Q]]#0, %[[Q]]#1

module {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<3x8xi8>, %ws: tensor<f32>) -> tensor<4x3xf32> {
    %a = call @qmlir.amax.4x8(%x) : (tensor<4x8xf32>) -> tensor<f32>
    %s = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%a) : (tensor<f32>) -> tensor<f32>
    %q:2 = call @qmlir.quantize.e4m3.per_tensor.4x8(%x, %s) : (tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>)
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%q#0, %q#1, %w, %ws) : (tensor<4x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<4x3xf32>
    return %y : tensor<4x3xf32>
  }
  func.func @block(%x: tensor<8x64xf32>, %w: tensor<16x64xi8>, %ws: tensor<512xi8>) -> tensor<8x16xf32> {
    %1 = call @qmlir.amax.block1x32.8x64(%x) : (tensor<8x64xf32>) -> tensor<8x2xf32>
    %2 = call @qmlir.compute_scale.e8m0_ceil.e4m3.8x2(%1) : (tensor<8x2xf32>) -> tensor<8x2xi8>
    %3:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.8x64(%x, %2) : (tensor<8x64xf32>, tensor<8x2xi8>) -> (tensor<8x64xi8>, tensor<8x2xi8>)
    %4 = call @qmlir.swizzle.mx.n.8x2(%3#1) : (tensor<8x2xi8>) -> tensor<512xi8>
    %5 = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(%3#0, %4, %w, %ws) : (tensor<8x64xi8>, tensor<512xi8>, tensor<16x64xi8>, tensor<512xi8>) -> tensor<8x16xf32>
    return %5 : tensor<8x16xf32>
  }
  func.func private @qmlir.amax.4x8(tensor<4x8xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(tensor<f32>) -> tensor<f32> attributes {qmlir.epsilon = 0.000000e+00 : f32, qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.pow2 = false, qmlir.rule = "fp8_per_tensor"}
  func.func private @qmlir.quantize.e4m3.per_tensor.4x8(tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>) attributes {qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scaling = "per_tensor"}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(tensor<4x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<4x3xf32> attributes {qmlir.a_format = "e4m3", qmlir.b_format = "e4m3", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scaling = "per_tensor"}
  func.func private @qmlir.amax.block1x32.8x64(tensor<8x64xf32>) -> tensor<8x2xf32> attributes {qmlir.block = array<i64: 1, 32>, qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.e8m0_ceil.e4m3.8x2(tensor<8x2xf32>) -> tensor<8x2xi8> attributes {qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.rule = "e8m0_ceil"}
  func.func private @qmlir.quantize.e4m3.block1x32.e8m0.8x64(tensor<8x64xf32>, tensor<8x2xi8>) -> (tensor<8x64xi8>, tensor<8x2xi8>) attributes {qmlir.block = array<i64: 1, 32>, qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
  func.func private @qmlir.swizzle.mx.n.8x2(tensor<8x2xi8>) -> tensor<512xi8> attributes {qmlir.layout = "mx", qmlir.op = "swizzle", qmlir.transpose = false}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(tensor<8x64xi8>, tensor<512xi8>, tensor<16x64xi8>, tensor<512xi8>) -> tensor<8x16xf32> attributes {qmlir.a_block = array<i64: 1, 32>, qmlir.a_format = "e4m3", qmlir.a_layout = "mx", qmlir.b_block = array<i64: 1, 32>, qmlir.b_format = "e4m3", qmlir.b_layout = "mx", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
}
