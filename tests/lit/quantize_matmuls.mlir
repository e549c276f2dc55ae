// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current quantize-all-matmuls=true}' %s | FileCheck %s --check-prefix=ALL
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current force-pow2-scales=true}' %s | FileCheck %s --check-prefix=POW2
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=none}' %s | FileCheck %s --check-prefix=NONE
// RUN: not %qmlir-opt -p 'quantize-matmuls{recipe=fp9}' %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: unknown recipe 'fp9' (known recipes: {{.*}}fp8-current{{.*}}none{{.*}})

// NONE-LABEL: func.func @linear_bias
// NONE: torch.aten.linear
// NONE-NOT: qmlir.

// A linear with a weight and a bias: activation and weight each go amax → compute_scale →
// quantize, then scaled_matmul (weight [N, K]: "nt"), bias added in f32.
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%[[X:.*]]: !torch.vtensor<[4,8],f32>)
// CHECK-DAG: %[[W:.*]] = torch.vtensor.literal({{.*}}) : !torch.vtensor<[3,8],f32>
// CHECK-DAG: %[[B:.*]] = torch.vtensor.literal({{.*}}) : !torch.vtensor<[3],f32>
// CHECK: %[[XB:.*]] = torch_c.to_builtin_tensor %[[X]]
// CHECK: %[[WB:.*]] = torch_c.to_builtin_tensor %[[W]]
// CHECK: %[[XA:.*]] = call @qmlir.amax.4x8(%[[XB]]) {qmlir.layer = "fc1"}
// CHECK: %[[XS:.*]] = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%[[XA]])
// CHECK: %[[XQ:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.4x8(%[[XB]], %[[XS]])
// CHECK: %[[WA:.*]] = call @qmlir.amax.3x8(%[[WB]])
// CHECK: %[[WS:.*]] = call @qmlir.compute_scale.fp8_per_tensor.e4m3(%[[WA]])
// CHECK: %[[WQ:.*]]:2 = call @qmlir.quantize.e4m3.per_tensor.3x8(%[[WB]], %[[WS]])
// CHECK: %[[Y:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x8.3x8(%[[XQ]]#0, %[[XQ]]#1, %[[WQ]]#0, %[[WQ]]#1) {qmlir.layer = "fc1", qmlir.recipe = "fp8-current", qmlir.recipe_reason = "the default recipe"}
// CHECK-SAME: -> tensor<4x3xf32>
// CHECK: %[[YT:.*]] = torch_c.from_builtin_tensor %[[Y]]
// CHECK: %[[OUT:.*]] = torch.aten.add.Tensor %[[YT]], %[[B]]
// CHECK-NOT: torch.aten.linear
// CHECK: return %[[OUT]]
func.func @linear_bias(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,3],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<3x8xf32>) : !torch.vtensor<[3,8],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0, 3.0]> : tensor<3xf32>) : !torch.vtensor<[3],f32>
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[3,8],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[4,3],f32> loc("fc1")
  return %0 : !torch.vtensor<[4,3],f32>
}

// bf16: converted to f32 before quantization, the f32 result converted back. A 3-D activation
// times a 2-D weight is one [M, K] GEMM (flattened, as for the block recipes), then expanded.
// CHECK-LABEL: func.func @linear_bf16_3d
// CHECK: torch.prims.convert_element_type %{{.*}}, %{{.*}} : !torch.vtensor<[2,4,8],bf16>, !torch.int -> !torch.vtensor<[2,4,8],f32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: call @qmlir.quantize.e4m3.per_tensor.8x8
// CHECK: %[[Y2:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.8x8.3x8({{.*}}) {qmlir.layer = "blocks.0.mlp"{{.*}}} : {{.*}} -> tensor<8x3xf32>
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[Y2]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 3]
// CHECK: %[[YT:.*]] = torch_c.from_builtin_tensor %[[Y]]
// CHECK: torch.prims.convert_element_type %[[YT]], %{{.*}} : !torch.vtensor<[2,4,3],f32>, !torch.int -> !torch.vtensor<[2,4,3],bf16>
func.func @linear_bf16_3d(%x: !torch.vtensor<[2,4,8],bf16>) -> !torch.vtensor<[2,4,3],bf16> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<3x8xbf16>) : !torch.vtensor<[3,8],bf16>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,4,8],bf16>, !torch.vtensor<[3,8],bf16>, !torch.none -> !torch.vtensor<[2,4,3],bf16> loc("blocks.0.mlp")
  return %0 : !torch.vtensor<[2,4,3],bf16>
}

// x @ w with w as [K, N]: "nn" layout.
// CHECK-LABEL: func.func @matmul_weight_kn
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nn.4x8.8x3
// CHECK-NOT: torch.aten.matmul
func.func @matmul_weight_kn(%x: !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[4,3],f32> {
  %w = torch.vtensor.literal(dense<0.25> : tensor<8x3xf32>) : !torch.vtensor<[8,3],f32>
  %0 = torch.aten.matmul %x, %w : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,3],f32> -> !torch.vtensor<[4,3],f32>
  return %0 : !torch.vtensor<[4,3],f32>
}

// addmm with beta = alpha = 1 is quantized (bias added after); other betas stay high precision.
// CHECK-LABEL: func.func @addmm
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nn.4x8.8x3
// CHECK: torch.aten.add.Tensor
// CHECK: torch.aten.addmm %{{.*}} {qmlir.kept_high_precision = "addmm with beta or alpha other than 1"}
func.func @addmm(%x: !torch.vtensor<[4,8],f32>) -> (!torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>) {
  %w = torch.vtensor.literal(dense<0.25> : tensor<8x3xf32>) : !torch.vtensor<[8,3],f32>
  %b = torch.vtensor.literal(dense<[1.0, 2.0, 3.0]> : tensor<3xf32>) : !torch.vtensor<[3],f32>
  %one = torch.constant.int 1
  %two = torch.constant.int 2
  %0 = torch.aten.addmm %b, %x, %w, %one, %one : !torch.vtensor<[3],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  %1 = torch.aten.addmm %b, %x, %w, %two, %one : !torch.vtensor<[3],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[4,3],f32>
  return %0, %1 : !torch.vtensor<[4,3],f32>, !torch.vtensor<[4,3],f32>
}

// Two activations: high precision by default, both quantized at run time with quantize-all.
// CHECK-LABEL: func.func @attention_scores
// CHECK: torch.aten.matmul %{{.*}} {qmlir.kept_high_precision = "no operand is a weight (use --quantize-all-matmuls)"}
// ALL-LABEL: func.func @attention_scores
// ALL: call @qmlir.quantize.e4m3.per_tensor.2x4x8
// ALL: call @qmlir.quantize.e4m3.per_tensor.2x8x4
// ALL: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nn.2x4x8.2x8x4({{.*}}) -> tensor<2x4x4xf32>
// ALL-NOT: torch.aten.matmul
func.func @attention_scores(%q: !torch.vtensor<[2,4,8],f32>, %k: !torch.vtensor<[2,8,4],f32>) -> !torch.vtensor<[2,4,4],f32> {
  %0 = torch.aten.matmul %q, %k : !torch.vtensor<[2,4,8],f32>, !torch.vtensor<[2,8,4],f32> -> !torch.vtensor<[2,4,4],f32>
  return %0 : !torch.vtensor<[2,4,4],f32>
}

// The recipe's options land on compute_scale's declaration; declarations close the module.
// CHECK: func.func private @qmlir.amax.4x8(tensor<4x8xf32>) -> tensor<f32> attributes {qmlir.op = "amax"}
// CHECK: func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3(tensor<f32>) -> tensor<f32> attributes {qmlir.epsilon = 0.000000e+00 : f32, qmlir.fp8_max = 4.480000e+02 : f32, qmlir.op = "compute_scale", qmlir.pow2 = false, qmlir.rule = "fp8_per_tensor"}
// POW2: func.func private @qmlir.compute_scale.fp8_per_tensor.e4m3.pow2(tensor<f32>) -> tensor<f32> attributes {{{.*}}qmlir.pow2 = true

// Per-layer choice: an excluded layer stays in high precision, a glob picks another recipe.
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current exclude=fc1 layer-recipes=blocks.*:nvfp4}' %s | FileCheck %s --check-prefix=LAYERS
// LAYERS-LABEL: func.func @linear_bias
// LAYERS: torch.aten.linear %{{.*}} {qmlir.kept_high_precision = "excluded by --exclude 'fc1'"}
// LAYERS-LABEL: func.func @linear_bf16_3d
// LAYERS: call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x8.3x8({{.*}}) {qmlir.layer = "blocks.0.mlp", qmlir.recipe = "nvfp4", qmlir.recipe_reason = "--layer-recipe 'blocks.*=nvfp4'"}
// LAYERS-LABEL: func.func @matmul_weight_kn
// LAYERS: qmlir.recipe = "fp8-current", qmlir.recipe_reason = "the default recipe"
