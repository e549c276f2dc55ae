// RUN: %qmlir-opt -p separate-gemm-operands %s | FileCheck %s
// RUN: %qmlir-opt -p separate-gemm-operands %s | %iree-compile-cpu --compile-to=flow - | FileCheck %s --check-prefix=FLOW
// RUN: %iree-compile-cpu --compile-to=flow %s | FileCheck %s --check-prefix=FUSED
// RUN: %qmlir-opt -p 'separate-gemm-operands{dynamic_only=true}' %s | FileCheck %s --check-prefix=DYNONLY

// The activation of a high-precision weight GEMM reaches it through a compute barrier, so that
// IREE packs it for the GEMM in a dispatch of its own instead of in its producer's.
// CHECK-LABEL: func.func @gelu_linear
// CHECK: %[[G:.*]] = torch.aten.gelu
// CHECK-NEXT: %[[B:.*]] = torch_c.to_builtin_tensor %[[G]] : !torch.vtensor<[64,32],f32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[S:.*]] = iree_tensor_ext.compute_barrier.start %[[B]] : tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[T:.*]] = torch_c.from_builtin_tensor %[[S]] : tensor<64x32xf32> -> !torch.vtensor<[64,32],f32>
// CHECK-NEXT: torch.aten.linear %[[T]], %{{.*}}, %{{.*}} :
// The GELU's dispatch writes plain f32; the pack into the GEMM's tiles is a step of its own.
// FLOW-LABEL: func.func @gelu_linear$async_dispatch_0_elementwise
// FLOW-NOT: iree_encoding.set_encoding
// FLOW: return
// FLOW: util.func public @gelu_linear$async
// FLOW: flow.dispatch @gelu_linear$async_dispatch_0
// FLOW: %[[PACKED:.*]] = flow.tensor.encode
// FLOW: flow.dispatch @gelu_linear$async_dispatch_1::@{{.*}}matmul{{.*}}(%{{.*}}, %[[PACKED]],
// Without the pass, IREE packs inside the GELU's dispatch (flattened to 1-D: the slow case).
// FUSED-LABEL: func.func @gelu_linear$async_dispatch_0_elementwise_2048_f32
// FUSED: iree_encoding.set_encoding
func.func @gelu_linear(%x: !torch.vtensor<[64,32],f32>) -> !torch.vtensor<[64,16],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<16x32xf32>) : !torch.vtensor<[16,32],f32>
  %none = torch.constant.none
  %str = torch.constant.str "none"
  %g = torch.aten.gelu %x, %str : !torch.vtensor<[64,32],f32>, !torch.str -> !torch.vtensor<[64,32],f32>
  %y = torch.aten.linear %g, %w, %none : !torch.vtensor<[64,32],f32>, !torch.vtensor<[16,32],f32>, !torch.none -> !torch.vtensor<[64,16],f32>
  return %y : !torch.vtensor<[64,16],f32>
}

// addmm's activation is its second operand; a dynamic row count reaches the barrier as its size.
// CHECK-LABEL: func.func @addmm_dynamic
// CHECK: %[[B:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,32],f32> -> tensor<?x32xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x32xf32>
// CHECK: %[[S:.*]] = iree_tensor_ext.compute_barrier.start %[[B]] : tensor<?x32xf32>{%[[D]]} -> tensor<?x32xf32>
// CHECK: %[[T:.*]] = torch_c.from_builtin_tensor %[[S]]
// CHECK: torch.aten.addmm %{{.*}}, %[[T]], %{{.*}}, %{{.*}}, %{{.*}} :
func.func @addmm_dynamic(%x: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,16],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<32x16xf32>) : !torch.vtensor<[32,16],f32>
  %bias = torch.vtensor.literal(dense<1.0> : tensor<16xf32>) : !torch.vtensor<[16],f32>
  %one = torch.constant.int 1
  %y = torch.aten.addmm %bias, %x, %w, %one, %one : !torch.vtensor<[16],f32>, !torch.vtensor<[?,32],f32>, !torch.vtensor<[32,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,16],f32>
  return %y : !torch.vtensor<[?,16],f32>
}

// A weight held outside the module (a global: externalize-weights) is a weight as a literal is.
// CHECK-LABEL: func.func @global_weight
// CHECK: %[[B:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,32],bf16> -> tensor<?x32xbf16>
// CHECK: iree_tensor_ext.compute_barrier.start %[[B]] : tensor<?x32xbf16>{%{{.*}}} -> tensor<?x32xbf16>
// CHECK: torch.aten.linear %{{.*}}, %[[W:[^,]*]], %{{.*}} :
// CHECK-NOT: compute_barrier
// CHECK: return
util.global private @weight = dense<0.5> : tensor<16x32xbf16>
func.func @global_weight(%x: !torch.vtensor<[?,32],bf16>) -> !torch.vtensor<[?,16],bf16> {
  %l = util.global.load @weight : tensor<16x32xbf16>
  %w = torch_c.from_builtin_tensor %l : tensor<16x32xbf16> -> !torch.vtensor<[16,32],bf16>
  %none = torch.constant.none
  %y = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,32],bf16>, !torch.vtensor<[16,32],bf16>, !torch.none -> !torch.vtensor<[?,16],bf16>
  return %y : !torch.vtensor<[?,16],bf16>
}

// dynamic_only (AVX2 code): a static activation keeps its fused producer-and-pack, one with a
// dynamic row count is separated (IREE failed to compile that fused dispatch).
// DYNONLY-LABEL: func.func @gelu_linear
// DYNONLY-NOT: compute_barrier
// DYNONLY-LABEL: func.func @addmm_dynamic
// DYNONLY: iree_tensor_ext.compute_barrier.start %{{.*}} : tensor<?x32xf32>
// DYNONLY: torch.aten.addmm

// Two activations (attention's Q·Kᵀ) or two constants: left as they are.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: compute_barrier
// CHECK: return
func.func @untouched(%a: !torch.vtensor<[8,4],f32>, %b: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[8,8],f32>, !torch.vtensor<[2,2],f32>) {
  %ab = torch.aten.mm %a, %b : !torch.vtensor<[8,4],f32>, !torch.vtensor<[4,8],f32> -> !torch.vtensor<[8,8],f32>
  %c = torch.vtensor.literal(dense<2.0> : tensor<2x2xf32>) : !torch.vtensor<[2,2],f32>
  %cc = torch.aten.mm %c, %c : !torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32> -> !torch.vtensor<[2,2],f32>
  return %ab, %cc : !torch.vtensor<[8,8],f32>, !torch.vtensor<[2,2],f32>
}
