// RUN: %qmlir-opt -p kv-cache-codes %s | FileCheck %s

// An FP8 KV cache's ops (the torch custom ops compiler/frontend/kv_codes.py defines): the new
// tokens' keys [1, 2, T, 48] (T dynamic: the prompt) are quantized by the mxfp8 recipe's
// rowwise chain over [2T, 48] (amax per 1x32 block, E8M0 ceil scale, E4M3 cast) into codes and
// 2 scales a row; the whole cache [1, 2, 8, 48] is dequantized by cuDNN's block_scale_dequantize.
// CHECK-LABEL: func.func @main
// CHECK-NOT: torch.operator
// CHECK: %[[X:.*]] = torch_c.to_builtin_tensor %arg2 : !torch.vtensor<[1,2,?,48],f32> -> tensor<1x2x?x48xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<1x2x?x48xf32> into tensor<?x48xf32>
// CHECK: %[[AMAX:.*]] = call @qmlir.amax.block1x32.Dx48(%[[FLAT]])
// CHECK: %[[SCALE:.*]] = call @qmlir.compute_scale.e8m0_ceil.e4m3.Dx2(%[[AMAX]])
// CHECK: %[[Q:.*]]:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.Dx48(%[[FLAT]], %[[SCALE]]) : (tensor<?x48xf32>, tensor<?x2xi8>) -> (tensor<?x48xi8>, tensor<?x2xi8>)
// CHECK: %[[CODES:.*]] = tensor.expand_shape %[[Q]]#0 {{\[}}[0, 1, 2], [3]]
// CHECK: %[[SCALES:.*]] = tensor.expand_shape %[[Q]]#1 {{\[}}[0, 1, 2], [3]]
// CHECK: torch_c.from_builtin_tensor %[[CODES]] : tensor<1x2x?x48xi8> -> !torch.vtensor<[1,2,?,48],ui8>
// CHECK: torch_c.from_builtin_tensor %[[SCALES]] : tensor<1x2x?x2xi8> -> !torch.vtensor<[1,2,?,2],ui8>
// CHECK: %[[C:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[1,2,8,48],ui8> -> tensor<1x2x8x48xi8>
// CHECK: %[[S:.*]] = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[1,2,8,2],ui8> -> tensor<1x2x8x2xi8>
// CHECK: %[[CF:.*]] = tensor.collapse_shape %[[C]] {{.*}} into tensor<16x48xi8>
// CHECK: %[[SF:.*]] = tensor.collapse_shape %[[S]] {{.*}} into tensor<16x2xi8>
// CHECK: %[[D:.*]] = call @qmlir.block_scale_dequantize.e4m3.block1x32.e8m0.16x48(%[[CF]], %[[SF]]) : (tensor<16x48xi8>, tensor<16x2xi8>) -> tensor<16x48xf32>
// CHECK: tensor.expand_shape %[[D]] {{.*}} into tensor<1x2x8x48xf32>
// CHECK-DAG: func.func private @qmlir.quantize.e4m3.block1x32.e8m0.Dx48({{.*}}qmlir.op = "quantize"
// CHECK-DAG: func.func private @qmlir.block_scale_dequantize.e4m3.block1x32.e8m0.16x48({{.*}}qmlir.op = "block_scale_dequantize"
func.func @main(%codes: !torch.vtensor<[1,2,8,48],ui8>, %scales: !torch.vtensor<[1,2,8,2],ui8>, %x: !torch.vtensor<[1,2,?,48],f32>) -> (!torch.vtensor<[1,2,?,48],ui8>, !torch.vtensor<[1,2,?,2],ui8>, !torch.vtensor<[1,2,8,48],f32>) {
  %q:2 = torch.operator "torch.qmlir.kv_quantize"(%x) : (!torch.vtensor<[1,2,?,48],f32>) -> (!torch.vtensor<[1,2,?,48],ui8>, !torch.vtensor<[1,2,?,2],ui8>)
  %d = torch.operator "torch.qmlir.kv_dequantize"(%codes, %scales) : (!torch.vtensor<[1,2,8,48],ui8>, !torch.vtensor<[1,2,8,2],ui8>) -> !torch.vtensor<[1,2,8,48],f32>
  return %q#0, %q#1, %d : !torch.vtensor<[1,2,?,48],ui8>, !torch.vtensor<[1,2,?,2],ui8>, !torch.vtensor<[1,2,8,48],f32>
}
