// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8 e8m0_rounding=floor}' %s | FileCheck %s --check-prefix=FLOOR
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' %s | FileCheck %s --check-prefix=FP4
// RUN: not %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block x_block_scaling_dim=2}' %s 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: error: recipe 'fp8-block' does not support 2D x 2D block scaling

// MXFP8: a 3-D activation is flattened to [M, K]; 1x32 blocks along K, E8M0 scales (ceil),
// swizzled into the 128x4 layout, the result expanded back.
// MX-LABEL: func.func @linear_3d
// MX: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x4x64xf32> into tensor<8x64xf32>
// MX: %[[A:.*]] = call @qmlir.amax.block1x32.8x64(%[[X]])
// MX: %[[E:.*]] = call @qmlir.compute_scale.e8m0_ceil.e4m3.8x2(%[[A]])
// MX: %[[Q:.*]]:2 = call @qmlir.quantize.e4m3.block1x32.e8m0.8x64(%[[X]], %[[E]])
// MX: %[[SA:.*]] = call @qmlir.swizzle.mx.n.8x2(%[[Q]]#1) {{.*}} -> tensor<512xi8>
// MX: %[[Y:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64(%[[Q]]#0, %[[SA]], %{{.*}}, %{{.*}})
// MX: tensor.expand_shape %[[Y]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
// FLOOR: call @qmlir.compute_scale.e8m0_floor.e4m3.8x2

// A [K, N] weight's blocks run down dim 0 (32x1), and its scales are swizzled transposed.
// MX-LABEL: func.func @matmul_kn
// MX: call @qmlir.amax.block32x1.64x40(
// MX: call @qmlir.swizzle.mx.t.2x40(
// MX: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nn.8x64.64x40(

// fp8-block: 1x128 activation blocks, 128x128 weight tiles, FP32 scales, GEMM-ready layouts
// (1D: [k_blocks, pad4(M)], 2D: [rows/128, pad4(k_blocks)]).
// BLOCK-LABEL: func.func @linear_3d
// BLOCK: call @qmlir.amax.block1x128.8x64(
// BLOCK: call @qmlir.compute_scale.fp8_block.e4m3.8x1({{.*}}) {{.*}} -> tensor<8x1xf32>
// BLOCK: call @qmlir.amax.block128x128.16x64(
// BLOCK: call @qmlir.swizzle.block1d.n.8x1({{.*}}) {{.*}} -> tensor<1x8xf32>
// BLOCK: call @qmlir.swizzle.block2d.n.1x1({{.*}}) {{.*}} -> tensor<1x4xf32>
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.8x64.16x64(
// BLOCK-DAG: func.func private @qmlir.compute_scale.fp8_block.e4m3.8x1({{.*}}qmlir.pow2 = true

// NVFP4: global amax and scale, block amax, E4M3 block decode scales, packed E2M1 data, the
// global decode scales passed to the GEMM; a [K, N] weight is transposed first.
// FP4-LABEL: func.func @linear_3d
// FP4: %[[G:.*]] = call @qmlir.amax.8x64(
// FP4: %[[S:.*]]:2 = call @qmlir.compute_scale.nvfp4_global(%[[G]])
// FP4: %[[BA:.*]] = call @qmlir.amax.block1x16.8x64(
// FP4: %[[D:.*]] = call @qmlir.compute_scale.nvfp4_block.8x4(%[[BA]], %[[S]]#0)
// FP4: %[[Q:.*]]:2 = call @qmlir.quantize.e2m1.block1x16.e4m3.te.8x64(%{{.*}}, %[[D]], %[[S]]#1) {{.*}} -> (tensor<8x32xi8>, tensor<8x4xi8>)
// FP4: call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32(%[[Q]]#0, %{{.*}}, %[[S]]#1,
// FP4-LABEL: func.func @matmul_kn
// FP4: linalg.transpose ins(%{{.*}} : tensor<64x40xf32>) outs(%{{.*}} : tensor<40x64xf32>) permutation = [1, 0]
func.func @linear_3d(%x: !torch.vtensor<[2,4,64],f32>) -> !torch.vtensor<[2,4,16],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<16x64xf32>) : !torch.vtensor<[16,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,4,64],f32>, !torch.vtensor<[16,64],f32>, !torch.none -> !torch.vtensor<[2,4,16],f32>
  return %0 : !torch.vtensor<[2,4,16],f32>
}

func.func @matmul_kn(%x: !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[8,40],f32> {
  %w = torch.vtensor.literal(dense<0.25> : tensor<64x40xf32>) : !torch.vtensor<[64,40],f32>
  %0 = torch.aten.matmul %x, %w : !torch.vtensor<[8,64],f32>, !torch.vtensor<[64,40],f32> -> !torch.vtensor<[8,40],f32>
  return %0 : !torch.vtensor<[8,40],f32>
}
