// RUN: %qmlir-opt -p lower-named-ops %s | FileCheck %s
// RUN: not %qmlir-opt -p 'lower-named-ops{target=rocm}' %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: named ops have no lowering for target 'rocm' (available: llvm-cpu, cuda)

// The contraction's maps: a [M, K], b given as [N, K] ("nt"), out [M, N].
// CHECK-DAG: #[[A_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B_MAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// Declarations get bodies (same names and attributes), calls stay as they are.
// CHECK-LABEL: func.func @main
// CHECK: call @qmlir.amax.4x8
// CHECK: call @qmlir.quantize.e4m3.per_tensor.4x8

// amax reduces the bit patterns with an unsigned max (NaN excluded): per row, then the rows.
// CHECK-LABEL: func.func private @qmlir.amax.4x8(
// CHECK-SAME: attributes {qmlir.op = "amax"}
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpi ugt
// CHECK: arith.maxui
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK: arith.maxui

// CHECK-LABEL: func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(
// CHECK: arith.divf
// CHECK: arith.andi %{{.*}}, %c-1_i32

// The cast is the integer-only encoder: round-to-even on the scaled magnitude (adding and removing
// 2^23), never truncf.
// CHECK-LABEL: func.func private @qmlir.quantize.e4m3.per_tensor.4x8(
// CHECK-NOT: arith.truncf
// CHECK: arith.minimumf
// CHECK: %[[MAGIC:.*]] = arith.constant 0x4B000000 : f32
// CHECK: %[[SHIFTED:.*]] = arith.addf %{{.*}}, %[[MAGIC]] : f32
// CHECK: arith.subf %[[SHIFTED]], %[[MAGIC]] : f32
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[INV:.*]] = linalg.generic
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
// CHECK: %[[ONCE:.*]] = iree_tensor_ext.compute_barrier.start %[[INV]] : tensor<f32> -> tensor<f32>
// CHECK: return %{{.*}}, %[[ONCE]] : tensor<4x8xi8>, tensor<f32>

// scaled_matmul decodes codes from their bits, contracts in f32 (a named linalg.matmul, B
// transposed by its maps) and applies both scale_invs.
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(
// CHECK-NOT: arith.extf %{{.*}} : f8E4M3FN
// CHECK: linalg.matmul indexing_maps = [#[[A_MAP]], #[[B_MAP]], #[[OUT_MAP]]] ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<3x8xf32>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK: arith.mulf
module {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<3x8xi8>, %ws: tensor<f32>) -> tensor<4x3xf32> {
    %a = call @qmlir.amax.4x8(%x) : (tensor<4x8xf32>) -> tensor<f32>
    %s = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%a) : (tensor<f32>) -> tensor<f32>
    %q:2 = call @qmlir.quantize.e4m3.per_tensor.4x8(%x, %s) : (tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>)
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%q#0, %q#1, %w, %ws) : (tensor<4x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<4x3xf32>
    return %y : tensor<4x3xf32>
  }
  func.func private @qmlir.amax.4x8(tensor<4x8xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(tensor<f32>) -> tensor<f32> attributes {qmlir.epsilon = 0.000000e+00 : f32, qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.pow2 = false, qmlir.rule = "fp8_per_tensor"}
  func.func private @qmlir.quantize.e4m3.per_tensor.4x8(tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xi8>, tensor<f32>) attributes {qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scaling = "per_tensor"}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(tensor<4x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<4x3xf32> attributes {qmlir.a_format = "e4m3", qmlir.b_format = "e4m3", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scaling = "per_tensor"}
}
