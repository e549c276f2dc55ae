// REQUIRES: nvrtc
// RUN: %qmlir-opt -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s

// An activation with dynamic rows ([?, K], as the recipe pass flattens it) runs on the same
// hand-written kernels as a static one: each tensor of dynamic shape carries its dims, the
// kernels' size constants are the index_cast of a tensor.dim, and the count region computes the
// grid from the workload by the static grid's formula (1-D: ceil(n / 1024) in [1, cap]; tiles of
// 128 rows for the FP8 GEMM, whose x switches to 16-column tiles at M <= 16,
// lower_gemm_cuda_few_rows.mlir; of 32 rows for the mxfp8 quantize).
// CHECK-DAG: #[[ONE_D:.*]] = affine_map<()[s0] -> (s0 ceildiv 1024, 1)>
// CHECK-DAG: #[[CAP_AMAX:.*]] = affine_map<()[s0] -> (s0, 1024)>
// CHECK-DAG: #[[CAP_CAST:.*]] = affine_map<()[s0] -> (s0, 4096)>
// CHECK-DAG: #[[GEMM_TILES:.*]] = affine_map<()[s0] -> (s0 ceildiv 128)>
// CHECK-DAG: #[[MX_TILES:.*]] = affine_map<()[s0] -> (s0 ceildiv 32)>

// CHECK-LABEL: func.func private @qmlir.amax.Dx8(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<?x8xf32> into tensor<?xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[FLAT]], %{{.*}} : tensor<?xf32>
// CHECK: %[[N32:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK: hal.dispatch.extern "qmlir_amax_f32"[%[[N]]](%[[FLAT]], %{{.*}}, %[[N32]]) : (tensor<?xf32>{%[[N]]}, tensor<f32>, i32) -> %{{.*}} count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// CHECK-NEXT: %[[T:.*]] = affine.max #[[ONE_D]]()[%[[W]]]
// CHECK-NEXT: %[[X:.*]] = affine.min #[[CAP_AMAX]]()[%[[T]]]
// CHECK: hal.return %[[X]], %{{.*}}, %{{.*}} : index, index, index

// The scale takes a scalar: no workload.
// CHECK-LABEL: func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(
// CHECK: hal.dispatch.extern "qmlir_fp8_scale_from_amax"(%arg0, {{.*}}) : (tensor<f32>, i32, i32, i32) -> tensor<f32> count(%{{.*}}: !hal.device) ->

// CHECK-LABEL: func.func private @qmlir.quantize.e4m3.per_tensor.Dx8(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0
// CHECK: %[[ROWS:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[FLAT]], %{{.*}} : tensor<?xf32>
// CHECK: %[[N32:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK: %[[Q:.*]]:2 = hal.dispatch.extern "qmlir_quantize_fp8_e4m3"[%[[N]]](%[[FLAT]], %arg1, %[[N32]]) : (tensor<?xf32>{%[[N]]}, tensor<f32>, i32) -> (tensor<?xi8>{%[[N]]}, tensor<f32>) count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// CHECK-NEXT: %[[T:.*]] = affine.max #[[ONE_D]]()[%[[W]]]
// CHECK-NEXT: affine.min #[[CAP_CAST]]()[%[[T]]]
// CHECK: tensor.expand_shape %[[Q]]#0 {{\[\[}}0, 1]] output_shape [%[[ROWS]], 8] : tensor<?xi8> into tensor<?x8xi8>

// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(
// CHECK: %[[A:.*]] = tensor.cast %arg0 : tensor<?x8xi8> to tensor<?x8xi8>
// CHECK: %[[M:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x8xi8>
// CHECK: %[[M32:.*]] = arith.index_cast %[[M]] : index to i32
// CHECK: %[[C0:.*]] = hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_few_rows"[%[[M]]](%[[A]], %arg1, %arg2, %arg3, %[[M32]], %{{.*}}, %{{.*}}) : (tensor<?x8xi8>{%[[M]]}, tensor<f32>, tensor<3x8xi8>, tensor<f32>, i32, i32, i32) -> tensor<?x3xf32>{%[[M]]} count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// CHECK: %[[X:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: hal.return %[[X]], %{{.*}}, %{{.*}} : index, index, index
// CHECK: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_many_rows"[%[[M]]](%[[A]], %arg1, %arg2, %arg3, %[[C0]], %[[M32]], %{{.*}}, %{{.*}}) : (tensor<?x8xi8>{%[[M]]}, tensor<f32>, tensor<3x8xi8>, tensor<f32>, tensor<?x3xf32>{%[[M]]}, i32, i32, i32) -> %[[C0]]{%[[M]]} count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// CHECK: %[[X:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[Y:.*]] = affine.apply #[[GEMM_TILES]]()[%[[W]]]
// CHECK: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index

// The GEMM-ready MX scales of A ([?] bytes) pass with their own dim, to both kernels of the pair.
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx64.16x64(
// CHECK: %[[M:.*]] = tensor.dim %[[A:.*]], %{{.*}} : tensor<?x64xi8>
// CHECK: %[[S:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?xi8>
// CHECK: %[[C0:.*]] = hal.dispatch.extern "qmlir_gemm_mxfp8_few_rows"[%[[M]]](%[[A]], %arg1, %arg2, %arg3, {{.*}}) : (tensor<?x64xi8>{%[[M]]}, tensor<?xi8>{%[[S]]}, tensor<16x64xi8>, tensor<512xi8>, i32, i32, i32) -> tensor<?x16xf32>{%[[M]]}
// CHECK: hal.dispatch.extern "qmlir_gemm_mxfp8_many_rows"[%[[M]]](%[[A]], %arg1, %arg2, %arg3, %[[C0]], {{.*}}) : (tensor<?x64xi8>{%[[M]]}, tensor<?xi8>{%[[S]]}, tensor<16x64xi8>, tensor<512xi8>, tensor<?x16xf32>{%[[M]]}, i32, i32, i32) -> %[[C0]]{%[[M]]}

// The fused mxfp8 quantize sizes its outputs from the rows: the data [rows, 64], the scales
// pad128(rows) x pad4(2) bytes.
// CHECK-LABEL: func.func private @qmlir.fused_quantize.e4m3.block1x32.e8m0.Dx64.mx(
// CHECK: %[[ROWS:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x64xf32>
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[ROWS]], %[[C128]] : index
// CHECK: %[[C512:.*]] = arith.constant 512 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[TILES]], %[[C512]] : index
// CHECK: %[[ROWS32:.*]] = arith.index_cast %[[ROWS]] : index to i32
// CHECK: hal.dispatch.extern "qmlir_quantize_mxfp8_rowwise"[%[[ROWS]]](%arg0, %[[ROWS32]], %{{.*}}, %{{.*}}) : (tensor<?x64xf32>{%[[ROWS]]}, i32, i32, i32) -> (tensor<?x64xi8>{%[[ROWS]]}, tensor<?xi8>{%[[BYTES]]}) count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// CHECK-NEXT: %[[X:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[Y:.*]] = affine.apply #[[MX_TILES]]()[%[[W]]]
// CHECK: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index

module {
  func.func @main(%x: tensor<?x8xf32>, %w: tensor<3x8xi8>, %ws: tensor<f32>) -> tensor<?x3xf32> {
    %a = call @qmlir.amax.Dx8(%x) : (tensor<?x8xf32>) -> tensor<f32>
    %s = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%a) : (tensor<f32>) -> tensor<f32>
    %q:2 = call @qmlir.quantize.e4m3.per_tensor.Dx8(%x, %s) : (tensor<?x8xf32>, tensor<f32>) -> (tensor<?x8xi8>, tensor<f32>)
    %y = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(%q#0, %q#1, %w, %ws) : (tensor<?x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<?x3xf32>
    return %y : tensor<?x3xf32>
  }
  func.func @block(%x: tensor<?x64xf32>, %w: tensor<16x64xi8>, %ws: tensor<512xi8>) -> tensor<?x16xf32> {
    %1 = call @qmlir.amax.block1x32.Dx64(%x) : (tensor<?x64xf32>) -> tensor<?x2xf32>
    %2 = call @qmlir.compute_scale.e8m0_ceil.e4m3.Dx2(%1) : (tensor<?x2xf32>) -> tensor<?x2xi8>
    %3:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.Dx64(%x, %2) : (tensor<?x64xf32>, tensor<?x2xi8>) -> (tensor<?x64xi8>, tensor<?x2xi8>)
    %4 = call @qmlir.swizzle.mx.n.Dx2(%3#1) : (tensor<?x2xi8>) -> tensor<?xi8>
    %5 = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx64.16x64(%3#0, %4, %w, %ws) : (tensor<?x64xi8>, tensor<?xi8>, tensor<16x64xi8>, tensor<512xi8>) -> tensor<?x16xf32>
    return %5 : tensor<?x16xf32>
  }
  func.func private @qmlir.amax.Dx8(tensor<?x8xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(tensor<f32>) -> tensor<f32> attributes {qmlir.epsilon = 0.000000e+00 : f32, qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.pow2 = false, qmlir.rule = "fp8_per_tensor"}
  func.func private @qmlir.quantize.e4m3.per_tensor.Dx8(tensor<?x8xf32>, tensor<f32>) -> (tensor<?x8xi8>, tensor<f32>) attributes {qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scaling = "per_tensor"}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(tensor<?x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<?x3xf32> attributes {qmlir.a_format = "e4m3", qmlir.b_format = "e4m3", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scaling = "per_tensor"}
  func.func private @qmlir.amax.block1x32.Dx64(tensor<?x64xf32>) -> tensor<?x2xf32> attributes {qmlir.block = array<i64: 1, 32>, qmlir.op = "amax"}
  func.func private @qmlir.compute_scale.e8m0_ceil.e4m3.Dx2(tensor<?x2xf32>) -> tensor<?x2xi8> attributes {qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.rule = "e8m0_ceil"}
  func.func private @qmlir.quantize.e4m3.block1x32.e8m0.Dx64(tensor<?x64xf32>, tensor<?x2xi8>) -> (tensor<?x64xi8>, tensor<?x2xi8>) attributes {qmlir.block = array<i64: 1, 32>, qmlir.format = "e4m3", qmlir.op = "quantize", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
  func.func private @qmlir.swizzle.mx.n.Dx2(tensor<?x2xi8>) -> tensor<?xi8> attributes {qmlir.layout = "mx", qmlir.op = "swizzle", qmlir.transpose = false}
  func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx64.16x64(tensor<?x64xi8>, tensor<?xi8>, tensor<16x64xi8>, tensor<512xi8>) -> tensor<?x16xf32> attributes {qmlir.a_block = array<i64: 1, 32>, qmlir.a_format = "e4m3", qmlir.a_layout = "mx", qmlir.b_block = array<i64: 1, 32>, qmlir.b_format = "e4m3", qmlir.b_layout = "mx", qmlir.b_transposed = true, qmlir.op = "scaled_matmul", qmlir.scale_format = "e8m0", qmlir.scaling = "block"}
}
