// REQUIRES: nvrtc
// RUN: %qmlir-opt -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s
// RUN: %qmlir-opt -p fuse-quantize-core %s | FileCheck %s --check-prefix=FUSE
// RUN: %qmlir-opt -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_100}' %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=KERNEL
// RUN: %qmlir-opt -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=NOTILE
// RUN: not %qmlir-opt -p 'lower-named-ops{target=cuda cuda-arch=sm_75}' %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: unknown CUDA architecture 'sm_75' (known: sm_89, sm_90, sm_100)

// The llvm-cpu templates cuda reuses (here the block amaxes and nvfp4's encode pass) come
// without their llvm-cpu tiling (passes/lowering/cpu/tiling.py): no compilation_info, neither as the attribute
// aliases printed above the module nor inline.
// NOTILE-NOT: compilation_info
// NOTILE: func.func private @qmlir.amax.block1x16.8x32(
// NOTILE-NOT: compilation_info
// NOTILE: func.func private @qmlir.quantize.e2m1.block1x16.e4m3.te.8x32(
// NOTILE-NOT: compilation_info
// NOTILE: func.func private @qmlir.amax.block32x1.64x64(
// NOTILE-NOT: compilation_info

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
// The FP8 GEMMs run 256 threads a workgroup; at 4 rows, the kernel for a few rows
// (lower_gemm_cuda_few_rows.mlir), whose family's PTX the module embeds.
// CHECK: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_few_rows"
// CHECK-SAME: -> tensor<4x3xf32>
// CHECK: hal.return
// CHECK-NEXT: } layout(
// CHECK-NEXT: gemm_few_rows.sm_90.ptx
// CHECK-NEXT: }) <workgroup_size = [256 : index, 1 : index, 1 : index]>

// Per tensor with the scale from this call's amax (fp8-current): nothing to fuse.
// FUSE-LABEL: func.func @main
// FUSE-NEXT: call @qmlir.amax.4x8(%arg0)
// FUSE-NEXT: call @qmlir.compute_scale.fp8_per_tensor.e4m3(
// FUSE-NEXT: call @qmlir.quantize.e4m3.per_tensor.4x8(%arg0,

// The block chain amax → compute_scale → quantize → swizzle becomes one fused named op ...
// FUSE-LABEL: func.func @block
// FUSE-NEXT: %[[F:.*]]:2 = call @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(%arg0) : (tensor<8x64xf32>) -> (tensor<8x64xi8>, tensor<512xi8>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(%[[F]]#0, %[[F]]#1, %arg1, %arg2)
// FUSE-NOT: @qmlir.amax.block1x32.8x64(
// FUSE-NOT: @qmlir.swizzle.mx.n.8x2(

// fp8-delayed: quantize with the stored scale and the same x's amax become one fused op and one
// kernel (one read of x); fp8-current's chain in @main (scale from this amax) is left alone.
// FUSE-LABEL: func.func @delayed
// FUSE: %[[SCALE:.*]] = util.global.load @qmlir.state.fc1.scale
// FUSE-NEXT: %[[D:.*]]:3 = call @qmlir.fused_quantize.e4m3.per_tensor.4x8.amax(%arg0, %[[SCALE]]) : (tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>, tensor<f32>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%[[D]]#0, %[[D]]#1, %arg1, %arg2)
// FUSE-NEXT: return %{{.*}}, %[[D]]#2

// NVFP4 (TE order): the fused kernel takes the global amax and derives S_enc itself, so the
// global compute_scale keeps only its decode scale (for the GEMM) and becomes one thread.
// FUSE-LABEL: func.func @nvfp4
// FUSE-NEXT: %[[GA:.*]] = call @qmlir.amax.8x32(%arg0)
// FUSE-NEXT: %[[SDEC:.*]] = call @qmlir.compute_scale.nvfp4_global_decode(%[[GA]]) : (tensor<f32>) -> tensor<f32>
// FUSE-NEXT: %[[N:.*]]:2 = call @qmlir.fused_quantize.e2m1.block1x16.e4m3.te.8x32.mx(%arg0, %[[GA]]) : (tensor<8x32xf32>, tensor<f32>) -> (tensor<8x16xi8>, tensor<512xi8>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32(%[[N]]#0, %[[N]]#1, %[[SDEC]], %arg1, %arg2, %arg3)
// FUSE-NOT: @qmlir.compute_scale.nvfp4_global(

// One x quantized rowwise (A) and columnwise (B of x @ x: blocks down dim 0, transposed swizzle)
// becomes one fused op with both outputs, on the combined kernel; a columnwise chain alone
// takes that kernel too (its rowwise outputs dropped).
// FUSE-LABEL: func.func @rowcol
// FUSE-NEXT: %[[RC:.*]]:4 = call @qmlir.fused_quantize.e4m3.block1x32.e8m0.64x64.mx.rowcol(%arg0) : (tensor<64x64xf32>) -> (tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.64x64.64x64(%[[RC]]#0, %[[RC]]#1, %[[RC]]#2, %[[RC]]#3)
// FUSE-LABEL: func.func @colonly
// FUSE-NEXT: %[[C:.*]]:2 = call @qmlir.fused_quantize.e4m3.block32x1.e8m0.64x64.mx.t(%arg2) : (tensor<64x64xf32>) -> (tensor<64x64xi8>, tensor<512xi8>)
// FUSE-NEXT: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.64x64.64x64(%arg0, %arg1, %[[C]]#0, %[[C]]#1)
// FUSE: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.64x64.mx.rowcol(
// FUSE-SAME: qmlir.outputs = "rowwise+columnwise"
// FUSE: func.func private @qmlir.fused_quantize.e4m3.block32x1.e8m0.64x64.mx.t(
// FUSE-SAME: qmlir.outputs = "columnwise"
// FUSE: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(tensor<8x64xf32>) -> (tensor<8x64xi8>, tensor<512xi8>)
// FUSE-SAME: qmlir.layout = "mx", qmlir.op = "fused_quantize", qmlir.rule = "e8m0_ceil"
// FUSE: func.func private @qmlir.fused_quantize.e4m3.per_tensor.4x8.amax(tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>, tensor<f32>) attributes {qmlir.format = "e4m3", qmlir.op = "fused_quantize", qmlir.scaling = "per_tensor"}

// ... which lowers to the fused kernel (scales written swizzled); the GEMM (8 rows) to the MXFP8
// kernel for a few rows.
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8_few_rows"
// MX-LABEL: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.8x64.mx(
// MX: %[[Q:.*]]:2 = hal.dispatch.extern "qmlir_quantize_mxfp8_rowwise"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<8x64xf32>, i32, i32, i32) -> (tensor<8x64xi8>, tensor<512xi8>)
// MX: ordinal(0) = [#hal.executable.object<{path = "mxfp8.sm_100.ptx"
// MX: return %[[Q]]#0, %[[Q]]#1

// The fused ops lowered. fp8-delayed's amax is tied to a zero-filled operand, so its bindings are
// x, scale, amax, data, scale_inv (DLAYOUT: the layouts print at the top of the module).
// KERNEL-DAG: #[[DLAYOUT:.*]] = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>
// KERNEL-LABEL: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.64x64.mx.rowcol(
// KERNEL: %[[RC:.*]]:4 = hal.dispatch.extern "qmlir_quantize_mxfp8"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<64x64xf32>, i32, i32, i32) -> (tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>)
// KERNEL: return %[[RC]]#0, %[[RC]]#1, %[[RC]]#2, %[[RC]]#3
// KERNEL-LABEL: func.func private @qmlir.fused_quantize.e4m3.block32x1.e8m0.64x64.mx.t(
// KERNEL: %[[C:.*]]:4 = hal.dispatch.extern "qmlir_quantize_mxfp8"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<64x64xf32>, i32, i32, i32) -> (tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>)
// KERNEL: return %[[C]]#2, %[[C]]#3 : tensor<64x64xi8>, tensor<512xi8>

// KERNEL-LABEL: func.func private @qmlir.fused_quantize.e4m3.per_tensor.4x8.amax(
// KERNEL: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// KERNEL: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// KERNEL: %[[Q:.*]]:3 = hal.dispatch.extern "qmlir_quantize_fp8_delayed_e4m3"(%[[FLAT]], %arg1, %[[ZERO]], %{{.*}}) : (tensor<32xf32>, tensor<f32>, tensor<f32>, i32) -> (tensor<32xi8>, tensor<f32>, %[[ZERO]])
// KERNEL: layout(#[[DLAYOUT]])
// KERNEL: %[[DATA:.*]] = tensor.expand_shape %[[Q]]#0
// KERNEL: return %[[DATA]], %[[Q]]#1, %[[Q]]#2
// KERNEL-LABEL: func.func private @qmlir.compute_scale.nvfp4_global_decode(
// KERNEL: %[[SDEC:.*]] = hal.dispatch.extern "qmlir_nvfp4_decode_scale"(%arg0) : (tensor<f32>) -> tensor<f32>
// KERNEL: ordinal(0) = [#hal.executable.object<{path = "nvfp4.sm_90.ptx"
// KERNEL: return %[[SDEC]] : tensor<f32>

module {
  util.global private mutable @qmlir.state.fc1.scale = dense<1.0> : tensor<f32>
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
  func.func @delayed(%x: tensor<4x8xf32>, %w: tensor<3x8xi8>, %ws: tensor<f32>) -> (tensor<4x3xf32>, tensor<f32>) {
    %s = util.global.load @qmlir.state.fc1.scale : tensor<f32>
    %a = call @qmlir.amax.4x8(%x) : (tensor<4x8xf32>) -> tensor<f32>
    %q:2 = call @qmlir.quantize.e4m3.per_tensor.4x8(%x, %s) : (tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>)
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%q#0, %q#1, %w, %ws) : (tensor<4x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<4x3xf32>
    return %y, %a : tensor<4x3xf32>, tensor<f32>
  }
  func.func @nvfp4(%x: tensor<8x32xf32>, %w: tensor<16x16xi8>, %ws: tensor<512xi8>, %wsdec: tensor<f32>) -> tensor<8x16xf32> {
    %ga = call @qmlir.amax.8x32(%x) : (tensor<8x32xf32>) -> tensor<f32>
    %g:2 = call @qmlir.compute_scale.nvfp4_global(%ga) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
    %ba = call @qmlir.amax.block1x16.8x32(%x) : (tensor<8x32xf32>) -> tensor<8x2xf32>
    %d = call @qmlir.compute_scale.nvfp4_block.8x2(%ba, %g#0) : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xi8>
    %q:2 = call @qmlir.quantize.e2m1.block1x16.e4m3.te.8x32(%x, %d, %g#1) : (tensor<8x32xf32>, tensor<8x2xi8>, tensor<f32>) -> (tensor<8x16xi8>, tensor<8x2xi8>)
    %sw = call @qmlir.swizzle.mx.n.8x2(%q#1) : (tensor<8x2xi8>) -> tensor<512xi8>
    %y = call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32(%q#0, %sw, %g#1, %w, %ws, %wsdec) : (tensor<8x16xi8>, tensor<512xi8>, tensor<f32>, tensor<16x16xi8>, tensor<512xi8>, tensor<f32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
  func.func @rowcol(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %ra = call @qmlir.amax.block1x32.64x64(%x) : (tensor<64x64xf32>) -> tensor<64x2xf32>
    %rs = call @qmlir.compute_scale.e8m0_ceil.e4m3.64x2(%ra) : (tensor<64x2xf32>) -> tensor<64x2xi8>
    %rq:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.64x64(%x, %rs) : (tensor<64x64xf32>, tensor<64x2xi8>) -> (tensor<64x64xi8>, tensor<64x2xi8>)
    %ca = call @qmlir.amax.block32x1.64x64(%x) : (tensor<64x64xf32>) -> tensor<2x64xf32>
    %cs = call @qmlir.compute_scale.e8m0_ceil.e4m3.2x64(%ca) : (tensor<2x64xf32>) -> tensor<2x64xi8>
    %cq:2 = call @qmlir.quantize.e4m3.block32x1.e8m0.64x64(%x, %cs) : (tensor<64x64xf32>, tensor<2x64xi8>) -> (tensor<64x64xi8>, tensor<2x64xi8>)
    %rw = call @qmlir.swizzle.mx.n.64x2(%rq#1) : (tensor<64x2xi8>) -> tensor<512xi8>
    %cw = call @qmlir.swizzle.mx.t.2x64(%cq#1) : (tensor<2x64xi8>) -> tensor<512xi8>
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.64x64.64x64(%rq#0, %rw, %cq#0, %cw) : (tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>) -> tensor<64x64xf32>
    return %y : tensor<64x64xf32>
  }
  func.func @colonly(%a: tensor<64x64xi8>, %as: tensor<512xi8>, %x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %ca = call @qmlir.amax.block32x1.64x64(%x) : (tensor<64x64xf32>) -> tensor<2x64xf32>
    %cs = call @qmlir.compute_scale.e8m0_ceil.e4m3.2x64(%ca) : (tensor<2x64xf32>) -> tensor<2x64xi8>
    %cq:2 = call @qmlir.quantize.e4m3.block32x1.e8m0.64x64(%x, %cs) : (tensor<64x64xf32>, tensor<2x64xi8>) -> (tensor<64x64xi8>, tensor<2x64xi8>)
    %cw = call @qmlir.swizzle.mx.t.2x64(%cq#1) : (tensor<2x64xi8>) -> tensor<512xi8>
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.64x64.64x64(%a, %as, %cq#0, %cw) : (tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>) -> tensor<64x64xf32>
    return %y : tensor<64x64xf32>
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
  func.func private @qmlir.amax.8x32(tensor<8x32xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.nvfp4_global(tensor<f32>) -> (tensor<f32>, tensor<f32>) attributes {qmlir.op = "compute_scale", qmlir.rule = "nvfp4_global"}
  func.func private @qmlir.amax.block1x16.8x32(tensor<8x32xf32>) -> tensor<8x2xf32> attributes {qmlir.block = array<i64: 1, 16>, qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.nvfp4_block.8x2(tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xi8> attributes {qmlir.op = "compute_scale", qmlir.rule = "nvfp4_block"}
  func.func private @qmlir.quantize.e2m1.block1x16.e4m3.te.8x32(tensor<8x32xf32>, tensor<8x2xi8>, tensor<f32>) -> (tensor<8x16xi8>, tensor<8x2xi8>) attributes {qmlir.block = array<i64: 1, 16>, qmlir.format = "e2m1", qmlir.op = "quantize", qmlir.order = "te", qmlir.packed = true, qmlir.scale_format = "e4m3", qmlir.scaling = "block"}
  func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32(tensor<8x16xi8>, tensor<512xi8>, tensor<f32>, tensor<16x16xi8>, tensor<512xi8>, tensor<f32>) -> tensor<8x16xf32> attributes {qmlir.a_block = array<i64: 1, 16>, qmlir.a_format = "e2m1", qmlir.a_layout = "mx", qmlir.b_block = array<i64: 1, 16>, qmlir.b_format = "e2m1", qmlir.b_layout = "mx", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scale_format = "nvfp4", qmlir.scaling = "block"}
  func.func private @qmlir.amax.block1x32.64x64(tensor<64x64xf32>) -> tensor<64x2xf32> attributes {qmlir.block = array<i64: 1, 32>, qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.e8m0_ceil.e4m3.64x2(tensor<64x2xf32>) -> tensor<64x2xi8> attributes {qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.rule = "e8m0_ceil"}
  func.func private @qmlir.quantize.e4m3.block1x32.e8m0.64x64(tensor<64x64xf32>, tensor<64x2xi8>) -> (tensor<64x64xi8>, tensor<64x2xi8>) attributes {qmlir.block = array<i64: 1, 32>, qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
  func.func private @qmlir.swizzle.mx.n.64x2(tensor<64x2xi8>) -> tensor<512xi8> attributes {qmlir.layout = "mx", qmlir.op = "swizzle", qmlir.transpose = false}
  func.func private @qmlir.amax.block32x1.64x64(tensor<64x64xf32>) -> tensor<2x64xf32> attributes {qmlir.block = array<i64: 32, 1>, qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.e8m0_ceil.e4m3.2x64(tensor<2x64xf32>) -> tensor<2x64xi8> attributes {qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.rule = "e8m0_ceil"}
  func.func private @qmlir.quantize.e4m3.block32x1.e8m0.64x64(tensor<64x64xf32>, tensor<2x64xi8>) -> (tensor<64x64xi8>, tensor<2x64xi8>) attributes {qmlir.block = array<i64: 32, 1>, qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
  func.func private @qmlir.swizzle.mx.t.2x64(tensor<2x64xi8>) -> tensor<512xi8> attributes {qmlir.layout = "mx", qmlir.op = "swizzle", qmlir.transpose = true}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.64x64.64x64(tensor<64x64xi8>, tensor<512xi8>, tensor<64x64xi8>, tensor<512xi8>) -> tensor<64x64xf32> attributes {qmlir.a_block = array<i64: 1, 32>, qmlir.a_format = "e4m3", qmlir.a_layout = "mx", qmlir.b_block = array<i64: 32, 1>, qmlir.b_format = "e4m3", qmlir.b_layout = "mx", qmlir.b_transposed = false, qmlir.op = "scaled_matmul", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
}
