// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p fold-constant-quantize -p lower-named-ops %s | %iree-compile-cpu --compile-to=flow - | FileCheck %s --check-prefix=FLOW

// An activation's 1 x 128 blocks: the cast reads x as [blocks, 128], one row per block, and the
// GEMM operand's decode as [rows, K blocks, 128]; both take each block's scale through an affine
// map (a broadcast), not a gather by index. K = 320 is two whole blocks and a partial one of 64,
// cast and decoded with the row's last scale, then joined.
// CHECK-LABEL: func.func private @qmlir.quantize.e4m3.block1x128.fp32.16x320
// CHECK: %[[XH:.*]] = tensor.extract_slice %arg0[0, 0] [16, 256] [1, 1] : tensor<16x320xf32> to tensor<16x256xf32>
// CHECK: %[[SH:.*]] = tensor.extract_slice %arg1[0, 0] [16, 2] [1, 1] : tensor<16x3xf32> to tensor<16x2xf32>
// CHECK: %[[XT:.*]] = tensor.extract_slice %arg0[0, 256] [16, 64] [1, 1] : tensor<16x320xf32> to tensor<16x64xf32>
// CHECK: %[[XF:.*]] = tensor.collapse_shape %[[XH]] {{\[\[}}0, 1]] : tensor<16x256xf32> into tensor<4096xf32>
// CHECK: %[[XR:.*]] = tensor.expand_shape %[[XF]] {{\[\[}}0, 1]] output_shape [32, 128] : tensor<4096xf32> into tensor<32x128xf32>
// CHECK: %[[SF:.*]] = tensor.collapse_shape %[[SH]] {{\[\[}}0, 1]] : tensor<16x2xf32> into tensor<32xf32>
// CHECK: %[[SR:.*]] = iree_tensor_ext.compute_barrier.start %[[SF]] : tensor<32xf32> -> tensor<32xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[XR]], %[[SR]] : tensor<32x128xf32>, tensor<32xf32>) {{.*}} attrs = {compilation_info
// CHECK-NOT: tensor.extract %
// CHECK: linalg.generic {{.*}} ins(%[[XT]], %{{.*}} : tensor<16x64xf32>, tensor<16x1xf32>)
// CHECK: tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<16x256xi8>, tensor<16x64xi8>) -> tensor<16x320xi8>
// CHECK-LABEL: func.func private @qmlir.scaled_matmul
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [16, 2, 128] : tensor<16x256xi8> into tensor<16x2x128xi8>
// CHECK: tensor.concat dim(1)
// The decode runs as a 3-D dispatch of its own; without the compute barriers IREE flattens it to
// 1-D and turns the scale's broadcast back into a gather.
// FLOW: func.func @linear$async_dispatch_{{[0-9]+}}_elementwise_16x2x128_i8xf32xf32
func.func @linear(%x: !torch.vtensor<[16,320],f32>) -> !torch.vtensor<[16,8],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<8x320xf32>) : !torch.vtensor<[8,320],f32>
  %none = torch.constant.none
  %y = torch.aten.linear %x, %w, %none : !torch.vtensor<[16,320],f32>, !torch.vtensor<[8,320],f32>, !torch.none -> !torch.vtensor<[16,8],f32>
  return %y : !torch.vtensor<[16,8],f32>
}
