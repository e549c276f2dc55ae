// RUN: %qmlir-opt -p batched-contractions %s | FileCheck %s

// Attention's two matmuls on [batch, heads, L, E] with dynamic dims: each becomes a call of one
// linalg contraction over all its dims (IREE data-tiles no contraction of two batch dims). Kᵀ
// given as a transpose of K's last two dims is read as K ("nt": the map takes (n, k)).
// Q: (b, h, m, k); K read as it is: (b, h, n, k); the scores: (b, h, m, n); V: (b, h, k, n).
// CHECK: #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-NEXT: #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-NEXT: #[[SMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-NEXT: #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @attention
// CHECK: %[[KT:.*]] = torch.aten.transpose.int %arg1
// CHECK: %[[Q:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,4,?,8],f32> -> tensor<?x4x?x8xf32>
// CHECK: %[[K:.*]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[?,4,?,8],f32> -> tensor<?x4x?x8xf32>
// CHECK: %[[S:.*]] = call @qmlir.batched_contraction.nt.Dx4xDx8.Dx4xDx8(%[[Q]], %[[K]]) : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x?xf32>
// CHECK: %[[SV:.*]] = torch_c.from_builtin_tensor %[[S]]
// CHECK: %[[P:.*]] = torch.aten.softmax.int %[[SV]]
// CHECK: %[[PB:.*]] = torch_c.to_builtin_tensor %[[P]]
// CHECK: %[[VB:.*]] = torch_c.to_builtin_tensor %arg2
// CHECK: %[[O:.*]] = call @qmlir.batched_contraction.nn.Dx4xDxD.Dx4xDx8(%[[PB]], %[[VB]])
// CHECK: torch_c.from_builtin_tensor %[[O]] : tensor<?x4x?x8xf32> -> !torch.vtensor<[?,4,?,8],f32>
// CHECK-NOT: torch.aten.matmul
func.func @attention(%q: !torch.vtensor<[?,4,?,8],f32>, %k: !torch.vtensor<[?,4,?,8],f32>, %v: !torch.vtensor<[?,4,?,8],f32>) -> !torch.vtensor<[?,4,?,8],f32> {
  %int-2 = torch.constant.int -2
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %kt = torch.aten.transpose.int %k, %int-2, %int-1 : !torch.vtensor<[?,4,?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[?,4,8,?],f32>
  %s = torch.aten.matmul %q, %kt : !torch.vtensor<[?,4,?,8],f32>, !torch.vtensor<[?,4,8,?],f32> -> !torch.vtensor<[?,4,?,?],f32>
  %p = torch.aten.softmax.int %s, %int-1, %none : !torch.vtensor<[?,4,?,?],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,4,?,?],f32>
  %o = torch.aten.matmul %p, %v : !torch.vtensor<[?,4,?,?],f32>, !torch.vtensor<[?,4,?,8],f32> -> !torch.vtensor<[?,4,?,8],f32>
  return %o : !torch.vtensor<[?,4,?,8],f32>
}

// Static shapes, 2-D or 3-D operands, a weight, other dtypes: left as they are.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call
// CHECK: torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[2,4,3,8],f32>
// CHECK: torch.aten.matmul %arg2, %arg3 : !torch.vtensor<[?,3,8],f32>
// CHECK: torch.aten.matmul %arg4, %arg5 : !torch.vtensor<[?,4,3,8],bf16>
// CHECK: torch.aten.matmul %arg6, %[[W:.*]] : !torch.vtensor<[?,4,3,8],f32>
func.func @kept(%a: !torch.vtensor<[2,4,3,8],f32>, %b: !torch.vtensor<[2,4,8,5],f32>, %c: !torch.vtensor<[?,3,8],f32>, %d: !torch.vtensor<[?,8,5],f32>, %e: !torch.vtensor<[?,4,3,8],bf16>, %f: !torch.vtensor<[?,4,8,5],bf16>, %g: !torch.vtensor<[?,4,3,8],f32>) -> (!torch.vtensor<[2,4,3,5],f32>, !torch.vtensor<[?,3,5],f32>, !torch.vtensor<[?,4,3,5],bf16>, !torch.vtensor<[?,4,3,5],f32>) {
  %w = torch.vtensor.literal(dense<1.0> : tensor<1x4x8x5xf32>) : !torch.vtensor<[1,4,8,5],f32>
  %0 = torch.aten.matmul %a, %b : !torch.vtensor<[2,4,3,8],f32>, !torch.vtensor<[2,4,8,5],f32> -> !torch.vtensor<[2,4,3,5],f32>
  %1 = torch.aten.matmul %c, %d : !torch.vtensor<[?,3,8],f32>, !torch.vtensor<[?,8,5],f32> -> !torch.vtensor<[?,3,5],f32>
  %2 = torch.aten.matmul %e, %f : !torch.vtensor<[?,4,3,8],bf16>, !torch.vtensor<[?,4,8,5],bf16> -> !torch.vtensor<[?,4,3,5],bf16>
  %3 = torch.aten.matmul %g, %w : !torch.vtensor<[?,4,3,8],f32>, !torch.vtensor<[1,4,8,5],f32> -> !torch.vtensor<[?,4,3,5],f32>
  return %0, %1, %2, %3 : !torch.vtensor<[2,4,3,5],f32>, !torch.vtensor<[?,3,5],f32>, !torch.vtensor<[?,4,3,5],bf16>, !torch.vtensor<[?,4,3,5],f32>
}

// The contractions: the batch dims and M from the first operand, N from the second (of K: its
// dim 2 when transposed); zero-filled f32 sums of f32 products.
// CHECK-LABEL: func.func private @qmlir.batched_contraction.nt.Dx4xDx8.Dx4xDx8
// CHECK: %[[B0:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x4x?x8xf32>
// CHECK: %[[M:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x4x?x8xf32>
// CHECK: %[[N:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?x4x?x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[B0]], %[[M]], %[[N]]) : tensor<?x4x?x?xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x4x?x?xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) outs(%[[Z]] : tensor<?x4x?x?xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-LABEL: func.func private @qmlir.batched_contraction.nn.Dx4xDxD.Dx4xDx8
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x4x?x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[VMAP]], #[[SMAP]]]
