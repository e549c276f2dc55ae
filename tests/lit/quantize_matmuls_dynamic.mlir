// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=LOWER
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MXLOWER
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=B1DLOWER
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block x_block_scaling_dim=2 w_block_scaling_dim=1}' %s | FileCheck %s --check-prefix=KEPT

// An activation with dynamic rows ([?, K]; the weight static): fp8-current quantizes it, its
// named ops take the dynamic dim (spelled D in their names).
// CHECK-LABEL: func.func @linear_dynamic
// CHECK-SAME: (%[[X:.*]]: !torch.vtensor<[?,8],f32>)
// CHECK: %[[XB:.*]] = torch_c.to_builtin_tensor %[[X]] : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
// CHECK: %[[XA:.*]] = call @qmlir.amax.Dx8(%[[XB]]) : (tensor<?x8xf32>) -> tensor<f32>
// CHECK: %[[XS:.*]] = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%[[XA]])
// CHECK: %[[XQ:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.Dx8(%[[XB]], %[[XS]]) : (tensor<?x8xf32>, tensor<f32>) -> (tensor<?x8xi8>, tensor<f32>)
// CHECK: call @qmlir.quantize.e4m3.per_tensor.3x8(
// CHECK: %[[Y:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(%[[XQ]]#0, %[[XQ]]#1, {{.*}}) {qmlir.recipe = "fp8-current", {{.*}}} : (tensor<?x8xi8>, tensor<f32>, tensor<3x8xi8>, tensor<f32>) -> tensor<?x3xf32>
// CHECK: torch_c.from_builtin_tensor %[[Y]] : tensor<?x3xf32> -> !torch.vtensor<[?,3],f32>
// CHECK-NOT: qmlir.kept_high_precision

// A block recipe (mxfp8, 1x32 blocks) quantizes the dynamic rows too: each row's blocks and
// scales as in a static compile, the scale grid [?, k_blocks], the GEMM-ready scales padded to
// whole 128-row tiles at run time. 128x128 activation blocks need static rows: kept, and said.
// BLOCK-LABEL: func.func @linear_dynamic
// BLOCK: %[[A:.*]] = call @qmlir.amax.block1x32.Dx8(%[[XB:.*]]) : (tensor<?x8xf32>) -> tensor<?x1xf32>
// BLOCK: %[[S:.*]] = call @qmlir.compute_scale.e8m0_ceil.e4m3.Dx1(%[[A]]) : (tensor<?x1xf32>) -> tensor<?x1xi8>
// BLOCK: %[[Q:.*]]:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.Dx8(%[[XB]], %[[S]]) : (tensor<?x8xf32>, tensor<?x1xi8>) -> (tensor<?x8xi8>, tensor<?x1xi8>)
// BLOCK: %[[SW:.*]] = call @qmlir.swizzle.mx.n.Dx1(%[[Q]]#1) : (tensor<?x1xi8>) -> tensor<?xi8>
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx8.3x8(%[[Q]]#0, %[[SW]], {{.*}}) {qmlir.recipe = "mxfp8", {{.*}}} : (tensor<?x8xi8>, tensor<?xi8>, tensor<3x8xi8>, tensor<512xi8>) -> tensor<?x3xf32>
// BLOCK-NOT: qmlir.kept_high_precision
// KEPT-LABEL: func.func @linear_dynamic
// KEPT: torch.aten.linear {{.*}} {qmlir.kept_high_precision = "dynamic rows with 128x128 activation blocks (x_block_scaling_dim=2)"}
func.func @linear_dynamic(%x: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,3],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0, 3.0]> : tensor<3xf32>) : !torch.vtensor<[3],f32>
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[?,8],f32>, !torch.vtensor<[3,8],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[?,3],f32>
  return %0 : !torch.vtensor<[?,3],f32>
}

// A 3-D activation with dynamic batch and sequence: flattened to [?, K], the result expanded back
// with the activation's own dims.
// CHECK-LABEL: func.func @linear_dynamic_3d
// CHECK: %[[XB3:.*]] = torch_c.to_builtin_tensor {{.*}} -> tensor<?x?x8xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[XB3]] {{\[\[}}0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK: call @qmlir.amax.Dx8(%[[FLAT]])
// CHECK: %[[Y3:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(
// CHECK: %[[D0:.*]] = tensor.dim %[[XB3]], %{{.*}} : tensor<?x?x8xf32>
// CHECK: %[[D1:.*]] = tensor.dim %[[XB3]], %{{.*}} : tensor<?x?x8xf32>
// CHECK: tensor.expand_shape %[[Y3]] {{\[\[}}0, 1], [2]] output_shape [%[[D0]], %[[D1]], 3] : tensor<?x3xf32> into tensor<?x?x3xf32>

// BLOCK-LABEL: func.func @linear_dynamic_3d
// BLOCK: %[[F:.*]] = tensor.collapse_shape {{.*}} : tensor<?x?x8xf32> into tensor<?x8xf32>
// BLOCK: call @qmlir.amax.block1x32.Dx8(%[[F]])
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx8.3x8(
// BLOCK: tensor.expand_shape {{.*}} : tensor<?x3xf32> into tensor<?x?x3xf32>
func.func @linear_dynamic_3d(%x: !torch.vtensor<[?,?,8],f32>) -> !torch.vtensor<[?,?,3],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,?,8],f32>, !torch.vtensor<[3,8],f32>, !torch.none -> !torch.vtensor<[?,?,3],f32>
  return %0 : !torch.vtensor<[?,?,3],f32>
}

// Lowered: each tensor.empty of the activation's shape takes its rows from tensor.dim.
// LOWER-LABEL: func.func private @qmlir.amax.Dx8(%arg0: tensor<?x8xf32>) -> tensor<f32>
// LOWER: %[[R:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xf32>
// LOWER: tensor.empty(%[[R]]) : tensor<?xi32>
// LOWER-LABEL: func.func private @qmlir.quantize.e4m3.per_tensor.Dx8(%arg0: tensor<?x8xf32>, %arg1: tensor<f32>) -> (tensor<?x8xi8>, tensor<f32>)
// LOWER: %[[Q:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xf32>
// LOWER: tensor.empty(%[[Q]]) : tensor<?x8xi8>
// LOWER-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx8.3x8(%arg0: tensor<?x8xi8>, %arg1: tensor<f32>, %arg2: tensor<3x8xi8>, %arg3: tensor<f32>) -> tensor<?x3xf32>
// LOWER: %[[M:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xi8>
// LOWER: tensor.empty(%[[M]]) : tensor<?x8xf32>
// LOWER: linalg.matmul {{.*}} ins({{.*}} : tensor<?x8xf32>, tensor<3x8xf32>) outs({{.*}} : tensor<?x3xf32>) -> tensor<?x3xf32>
// LOWER: tensor.empty(%[[M]]) : tensor<?x3xf32>

// mx-swizzled scales of dynamic rows: ceil(M / 128) tiles of 128 x 4 (one column of tiles here).
// MXLOWER-LABEL: func.func private @qmlir.swizzle.mx.n.Dx1(%arg0: tensor<?x1xi8>) -> tensor<?xi8>
// MXLOWER: %[[M:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x1xi8>
// MXLOWER: %[[C128:.*]] = arith.constant 128 : index
// MXLOWER: %[[T:.*]] = arith.ceildivui %[[M]], %[[C128]] : index
// MXLOWER: %[[C512:.*]] = arith.constant 512 : index
// MXLOWER: %[[N:.*]] = arith.muli %[[T]], %[[C512]] : index
// MXLOWER: tensor.empty(%[[N]]) : tensor<?xi8>
// MXLOWER: arith.cmpi ult, %{{.*}}, %[[M]] : index
// MXLOWER-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx8.3x8
// MXLOWER: %[[R:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x8xi8>
// MXLOWER: tensor.empty(%[[R]]) : tensor<?x1xi8>
// MXLOWER: tensor.empty(%[[R]]) : tensor<?x8xf32>
// MXLOWER: linalg.matmul {{.*}} outs({{.*}} : tensor<?x3xf32>) -> tensor<?x3xf32>

// fp8-block's 1x128 activation scales, block1d: [k_blocks, pad4(M)], transposed, M read at run time.
// B1DLOWER-LABEL: func.func private @qmlir.swizzle.block1d.n.Dx1(%arg0: tensor<?x1xf32>) -> tensor<1x?xf32>
// B1DLOWER: %[[M:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x1xf32>
// B1DLOWER: %[[C4:.*]] = arith.constant 4 : index
// B1DLOWER: %[[Q:.*]] = arith.ceildivui %[[M]], %[[C4]] : index
// B1DLOWER: %[[P:.*]] = arith.muli %[[Q]], %{{.*}} : index
// B1DLOWER: tensor.empty(%[[P]]) : tensor<1x?xf32>
// B1DLOWER: arith.cmpi ult, %{{.*}}, %[[M]] : index
