// REQUIRES: nvrtc
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=PT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-rowwise}' -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=ROW
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p fuse-quantize-core -p 'lower-named-ops{target=cuda cuda-arch=sm_90}' %s | FileCheck %s --check-prefix=FP4

// A decode step's GEMM (M of at most 16 rows) runs the FP8 kernels for a few rows, 16 output
// columns a workgroup over all of K, on the grid (ceil(N/16), 1); from 17 rows on, the 128x128
// tiles on (ceil(N/128), ceil(M/128)). N = 300: 19 workgroups against 3. A static M picks the
// kernel here; a dynamic one launches both, the few-rows kernel and then the many-rows one (the
// tiles) on its C in place, each on its grid where M is its case and on one workgroup otherwise
// (the kernel returns at once), the grids picked in the count regions from the workload (M).

// PT-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x64.300x64(
// PT: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_few_rows"(
// PT-SAME: -> tensor<1x300xf32> count(
// PT-NEXT: %[[X:.*]] = arith.constant 19 : index
// PT-NEXT: %[[Y:.*]] = arith.constant 1 : index
// PT: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index
// PT: <workgroup_size = [256 : index, 1 : index, 1 : index]>

// PT-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.16x64.300x64(
// PT: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_few_rows"(
// PT-SAME: -> tensor<16x300xf32> count(
// PT-NEXT: arith.constant 19 : index

// PT-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.17x64.300x64(
// PT: hal.dispatch.extern "qmlir_gemm_fp8_per_tensor"(
// PT-SAME: -> tensor<17x300xf32> count(
// PT-NEXT: %[[X:.*]] = arith.constant 3 : index
// PT-NEXT: %[[Y:.*]] = arith.constant 1 : index
// PT: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index

// PT-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx64.300x64(
// PT: %[[C0:.*]] = hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_few_rows"[%[[M:.*]]](
// PT-SAME: -> tensor<?x300xf32>{%[[M]]} count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// PT-NEXT: %[[ROWS:.*]] = arith.constant 16 : index
// PT-NEXT: %[[FEW:.*]] = arith.cmpi ule, %[[W]], %[[ROWS]] : index
// PT-NEXT: %[[IF_FEW:.*]] = arith.constant 19 : index
// PT-NEXT: %[[IF_MANY:.*]] = arith.constant 1 : index
// PT-NEXT: %[[X:.*]] = arith.select %[[FEW]], %[[IF_FEW]], %[[IF_MANY]] : index
// PT-NEXT: %[[Y:.*]] = arith.constant 1 : index
// PT: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index
// PT: %[[C:.*]] = hal.dispatch.extern "qmlir_gemm_fp8_per_tensor_many_rows"[%[[M]]](
// PT-SAME: %[[C0]], %{{.*}}, %{{.*}}, %{{.*}}) :
// PT-SAME: -> %[[C0]]{%[[M]]} count(%{{.*}}: !hal.device, %[[W:.*]]: index)
// PT-NEXT: %[[ROWS:.*]] = arith.constant 16 : index
// PT-NEXT: %[[FEW:.*]] = arith.cmpi ule, %[[W]], %[[ROWS]] : index
// PT-NEXT: %[[IF_FEW:.*]] = arith.constant 1 : index
// PT-NEXT: %[[IF_MANY:.*]] = arith.constant 3 : index
// PT-NEXT: %[[X:.*]] = arith.select %[[FEW]], %[[IF_FEW]], %[[IF_MANY]] : index
// PT-NEXT: %[[Y:.*]] = affine.apply #{{.*}}()[%[[W]]]
// PT: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index
// PT-NOT: hal.dispatch.extern
// PT: return %{{.*}}

// BLOCK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x64.300x64(
// BLOCK: hal.dispatch.extern "qmlir_gemm_fp8_block_few_rows"(
// BLOCK-SAME: -> tensor<1x300xf32> count(
// BLOCK-NEXT: arith.constant 19 : index
// BLOCK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.17x64.300x64(
// BLOCK: hal.dispatch.extern "qmlir_gemm_fp8_block"(
// BLOCK-SAME: -> tensor<17x300xf32> count(
// BLOCK-NEXT: arith.constant 3 : index
// BLOCK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx64.300x64(
// BLOCK: hal.dispatch.extern "qmlir_gemm_fp8_block_few_rows"[
// BLOCK: arith.select
// BLOCK: hal.dispatch.extern "qmlir_gemm_fp8_block_many_rows"[
// BLOCK: arith.select

// fp8-rowwise (a scale a row over all of K: here K = 64) takes the rowwise GEMMs the same way, and
// its activations' quantize a kernel of its own, a warp a row: (1, ceil(rows/8)) workgroups.
// ROW-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1d.nt.1x64.300x64(
// ROW: hal.dispatch.extern "qmlir_gemm_fp8_rowwise_few_rows"(
// ROW-SAME: -> tensor<1x300xf32> count(
// ROW-NEXT: arith.constant 19 : index
// ROW-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1d.nt.17x64.300x64(
// ROW: hal.dispatch.extern "qmlir_gemm_fp8_rowwise"(
// ROW-SAME: -> tensor<17x300xf32> count(
// ROW-NEXT: arith.constant 3 : index
// ROW-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1d.nt.Dx64.300x64(
// ROW: hal.dispatch.extern "qmlir_gemm_fp8_rowwise_few_rows"[
// ROW: arith.select
// ROW: hal.dispatch.extern "qmlir_gemm_fp8_rowwise_many_rows"[
// ROW: arith.select
// ROW-LABEL: func.func private @qmlir.fused_quantize.e4m3.block1x64.fp32.300x64.block1d(
// ROW: hal.dispatch.extern "qmlir_quantize_fp8_rowwise"(
// ROW-SAME: -> (tensor<300x64xi8>, tensor<1x300xf32>) count(
// ROW-NEXT: %[[X:.*]] = arith.constant 1 : index
// ROW-NEXT: %[[Y:.*]] = arith.constant 38 : index
// ROW: hal.return %[[X]], %[[Y]], %{{.*}} : index, index, index

// nvfp4 the same way, its pair at its tiles' 128 threads; from 17 rows its 64x64 tiles: 5 wide.
// FP4-LABEL: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x32.300x32(
// FP4: hal.dispatch.extern "qmlir_gemm_nvfp4_few_rows"(
// FP4-SAME: -> tensor<1x300xf32> count(
// FP4-NEXT: arith.constant 19 : index
// FP4: <workgroup_size = [128 : index, 1 : index, 1 : index]>
// FP4-LABEL: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.17x32.300x32(
// FP4: hal.dispatch.extern "qmlir_gemm_nvfp4"(
// FP4-SAME: -> tensor<17x300xf32> count(
// FP4-NEXT: arith.constant 5 : index
// FP4-LABEL: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx32.300x32(
// FP4: hal.dispatch.extern "qmlir_gemm_nvfp4_few_rows"[
// FP4: arith.select
// FP4: <workgroup_size = [128 : index, 1 : index, 1 : index]>
// FP4: hal.dispatch.extern "qmlir_gemm_nvfp4_many_rows"[
// FP4: arith.select
// FP4: <workgroup_size = [128 : index, 1 : index, 1 : index]>

// mxfp8 the same way (its few-rows kernel promotes each 32-K step by its E8M0 scales).
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x64.300x64(
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8_few_rows"(
// MX-SAME: -> tensor<1x300xf32> count(
// MX-NEXT: arith.constant 19 : index
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.17x64.300x64(
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8"(
// MX-SAME: -> tensor<17x300xf32> count(
// MX-NEXT: arith.constant 3 : index
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx64.300x64(
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8_few_rows"[
// MX: arith.select
// MX: hal.dispatch.extern "qmlir_gemm_mxfp8_many_rows"[
// MX: arith.select

func.func @one_row(%x: !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[1,300],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<300x64xf32>) : !torch.vtensor<[300,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[1,64],f32>, !torch.vtensor<[300,64],f32>, !torch.none -> !torch.vtensor<[1,300],f32>
  return %0 : !torch.vtensor<[1,300],f32>
}

func.func @sixteen_rows(%x: !torch.vtensor<[16,64],f32>) -> !torch.vtensor<[16,300],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<300x64xf32>) : !torch.vtensor<[300,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[16,64],f32>, !torch.vtensor<[300,64],f32>, !torch.none -> !torch.vtensor<[16,300],f32>
  return %0 : !torch.vtensor<[16,300],f32>
}

func.func @seventeen_rows(%x: !torch.vtensor<[17,64],f32>) -> !torch.vtensor<[17,300],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<300x64xf32>) : !torch.vtensor<[300,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[17,64],f32>, !torch.vtensor<[300,64],f32>, !torch.none -> !torch.vtensor<[17,300],f32>
  return %0 : !torch.vtensor<[17,300],f32>
}

func.func @dynamic_rows(%x: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,300],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<300x64xf32>) : !torch.vtensor<[300,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,64],f32>, !torch.vtensor<[300,64],f32>, !torch.none -> !torch.vtensor<[?,300],f32>
  return %0 : !torch.vtensor<[?,300],f32>
}
