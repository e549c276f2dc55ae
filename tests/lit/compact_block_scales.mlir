// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p compact-block-scales %s | FileCheck %s --check-prefix=NV
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p compact-block-scales %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p compact-block-scales -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=LOW
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p compact-block-scales %s | FileCheck %s --check-prefix=BLOCK

// nvfp4: both operands' E4M3 block scales reach the GEMM as the quantize wrote them ([rows,
// K / 16]); no swizzle is left; the call keeps its attributes; the declaration says so (compact
// layouts, its own variant)
// NV-LABEL: func.func @linear
// NV-NOT: call @qmlir.swizzle
// NV: %[[X:.*]]:2 = call @qmlir.quantize.e2m1.block1x16.e4m3.te.8x64
// NV-NOT: call @qmlir.swizzle
// NV: call @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32.compact_ab(%[[X]]#0, %[[X]]#1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {qmlir.recipe = "nvfp4", {{.*}}} : (tensor<8x32xi8>, tensor<8x4xi8>, tensor<f32>, tensor<16x32xi8>, tensor<16x4xi8>, tensor<f32>) -> tensor<8x16xf32>
// NV-NOT: call @qmlir.swizzle
// NV: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.8x32.16x32.compact_ab
// NV-SAME: qmlir.a_layout = "compact"
// NV-SAME: qmlir.b_layout = "compact"
// NV-NOT: func.func private @qmlir.swizzle

// mxfp8: the same for E8M0 scales ([rows, K / 32])
// MX: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64.compact_ab({{.*}}) {{.*}} : (tensor<8x64xi8>, tensor<8x2xi8>, tensor<16x64xi8>, tensor<16x2xi8>) -> tensor<8x16xf32>
// MX-NOT: qmlir.swizzle

// lowered: the GEMM reads its scale operands as they are (no unswizzle), the weight's folded to
// the compact grid
// LOW: call @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64.compact_ab(%{{.*}}, %{{.*}}, %[[W:.*]], %[[WS:.*]]) {{.*}} : (tensor<8x64xi8>, tensor<8x2xi8>, tensor<16x64xi8>, tensor<16x2xi8>)
// LOW: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.8x64.16x64.compact_ab(%[[A:.*]]: tensor<8x64xi8>, %[[SA:.*]]: tensor<8x2xi8>, %[[B:.*]]: tensor<16x64xi8>, %[[SB:.*]]: tensor<16x2xi8>)
// LOW-NOT: linalg.index
// LOW: tensor.cast %[[SA]] : tensor<8x2xi8> to tensor<8x2xi8>
// LOW: tensor.cast %[[SB]] : tensor<16x2xi8> to tensor<16x2xi8>

// fp8-block's fp32 scales keep their layouts (block1d, block2d): not mx
// BLOCK: call @qmlir.swizzle.block1d
// BLOCK: call @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.
// BLOCK-NOT: compact

func.func @linear(%x: !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[8,16],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<16x64xf32>) : !torch.vtensor<[16,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[8,64],f32>, !torch.vtensor<[16,64],f32>, !torch.none -> !torch.vtensor<[8,16],f32>
  return %0 : !torch.vtensor<[8,16],f32>
}
