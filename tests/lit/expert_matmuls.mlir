// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8 exclude=moe.expert1 layer-recipes=*.expert0:nvfp4}' %s | FileCheck %s --check-prefix=GLOB
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8 exclude=moe}' %s | FileCheck %s --check-prefix=KEPT

// An activation [E, M, K] times a batched weight [E, K, N] (MoE experts): one 2-D matmul per
// expert, on select(x, i) and a [K, N] literal of its own (expert i's slice of the weight),
// named "<layer>.expert<i>", the results stacked back to [E, M, N].
// CHECK-LABEL: func.func @experts
// CHECK-SAME: (%[[X:.*]]: !torch.vtensor<[2,4,8],f32>)
// CHECK: %[[X0:.*]] = torch.aten.select.int %[[X]], %{{.*}}, %{{.*}} : !torch.vtensor<[2,4,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,8],f32>
// CHECK: torch.vtensor.literal(dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [0.000000e+00, {{.*}} : tensor<8x2xf32>) : !torch.vtensor<[8,2],f32>
// CHECK: %[[Y0:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.4x8.8x2({{.*}}) {qmlir.layer = "moe.expert0", qmlir.recipe = "mxfp8"
// CHECK: %[[T0:.*]] = torch_c.from_builtin_tensor %[[Y0]]
// CHECK: %[[X1:.*]] = torch.aten.select.int %[[X]]
// CHECK: torch.vtensor.literal(dense<{{\[\[}}5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00], [0.000000e+00, {{.*}} : tensor<8x2xf32>)
// CHECK: %[[Y1:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.4x8.8x2({{.*}}) {qmlir.layer = "moe.expert1", qmlir.recipe = "mxfp8"
// CHECK: %[[T1:.*]] = torch_c.from_builtin_tensor %[[Y1]]
// CHECK: %[[L:.*]] = torch.prim.ListConstruct %[[T0]], %[[T1]]
// CHECK: %[[OUT:.*]] = torch.aten.stack %[[L]], %{{.*}} : !torch.list<vtensor<[4,2],f32>>, !torch.int -> !torch.vtensor<[2,4,2],f32>
// CHECK-NOT: torch.aten.bmm
// CHECK-NOT: tensor<2x8x2xf32>
// CHECK: return %[[OUT]]

// Globs pick experts by name; the matmul's own layer name picks them all.
// GLOB-LABEL: func.func @experts
// GLOB: call @qmlir.scaled_matmul.e2m1xe2m1{{.*}}qmlir.layer = "moe.expert0", qmlir.recipe = "nvfp4", qmlir.recipe_reason = "--layer-recipe '*.expert0=nvfp4'"
// GLOB: torch.aten.mm {{.*}}qmlir.kept_high_precision = "excluded by --exclude 'moe.expert1'"
// KEPT-LABEL: func.func @experts
// KEPT: torch.aten.bmm {{.*}}qmlir.kept_high_precision = "excluded by --exclude 'moe'"
// KEPT-NOT: torch.aten.select.int
func.func @experts(%x: !torch.vtensor<[2,4,8],f32>) -> !torch.vtensor<[2,4,2],f32> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0], [3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[5.0, 6.0], [7.0, 8.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]> : tensor<2x8x2xf32>) : !torch.vtensor<[2,8,2],f32>
  %0 = torch.aten.bmm %x, %w : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,2],f32> -> !torch.vtensor<[2,4,2],f32> loc("moe")
  return %0 : !torch.vtensor<[2,4,2],f32>
}

// bf16 weights are sliced as they are (bf16 literals), then widened like any weight.
// KEPT-LABEL: func.func @experts_bf16
// CHECK-LABEL: func.func @experts_bf16
// CHECK: torch.vtensor.literal(dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xbf16>) : !torch.vtensor<[2,2],bf16>
// CHECK: qmlir.layer = "expert0"
// CHECK: torch.vtensor.literal(dense<{{\[\[}}5.000000e+00, 6.000000e+00], [7.000000e+00, 5.000000e-01]]> : tensor<2x2xbf16>) : !torch.vtensor<[2,2],bf16>
// CHECK: qmlir.layer = "expert1"
// CHECK: torch.aten.stack {{.*}} -> !torch.vtensor<[2,4,2],bf16>
func.func @experts_bf16(%x: !torch.vtensor<[2,4,2],bf16>) -> !torch.vtensor<[2,4,2],bf16> {
  %w = torch.vtensor.literal(dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 0.5]]]> : tensor<2x2x2xbf16>) : !torch.vtensor<[2,2,2],bf16>
  %0 = torch.aten.bmm %x, %w : !torch.vtensor<[2,4,2],bf16>, !torch.vtensor<[2,2,2],bf16> -> !torch.vtensor<[2,4,2],bf16>
  return %0 : !torch.vtensor<[2,4,2],bf16>
}

// Several batch dims: experts numbered row-major over them, the stack viewed back.
// CHECK-LABEL: func.func @experts_4d
// CHECK-COUNT-3: qmlir.recipe = "mxfp8"
// CHECK: qmlir.layer = "blocks.1.moe.expert3", qmlir.recipe = "mxfp8"
// CHECK: %[[S:.*]] = torch.aten.stack {{.*}} -> !torch.vtensor<[4,4,3],f32>
// CHECK: torch.aten.view %[[S]], %{{.*}} : !torch.vtensor<[4,4,3],f32>, !torch.list<int> -> !torch.vtensor<[2,2,4,3],f32>
func.func @experts_4d(%x: !torch.vtensor<[2,2,4,8],f32>) -> !torch.vtensor<[2,2,4,3],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<2x2x8x3xf32>) : !torch.vtensor<[2,2,8,3],f32>
  %0 = torch.aten.matmul %x, %w : !torch.vtensor<[2,2,4,8],f32>, !torch.vtensor<[2,2,8,3],f32> -> !torch.vtensor<[2,2,4,3],f32> loc("blocks.1.moe")
  return %0 : !torch.vtensor<[2,2,4,3],f32>
}

// Two activations stay batched (and in high precision without --quantize-all-matmuls).
// CHECK-LABEL: func.func @activations
// CHECK: torch.aten.bmm {{.*}}qmlir.kept_high_precision = "no operand is a weight
func.func @activations(%x: !torch.vtensor<[2,4,8],f32>, %y: !torch.vtensor<[2,8,3],f32>) -> !torch.vtensor<[2,4,3],f32> {
  %0 = torch.aten.bmm %x, %y : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,3],f32> -> !torch.vtensor<[2,4,3],f32>
  return %0 : !torch.vtensor<[2,4,3],f32>
}
