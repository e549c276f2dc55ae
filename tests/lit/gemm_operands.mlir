// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current quantize_all_matmuls=true}' -p 'gemm-operands{dtype=bf16}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'gemm-operands{dtype=bf16}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'gemm-operands{dtype=bf16}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=NV
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'gemm-operands{dtype=bf16}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block pow2_scales=false}' -p 'gemm-operands{dtype=bf16}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=f32}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=F32
// RUN: not %qmlir-opt -p 'gemm-operands{dtype=f16}' %s 2>&1 | FileCheck %s --check-prefix=BAD

// With bf16 operands (a CPU with AVX512-BF16, passes/gemm_operands.py), each scaled GEMM decodes
// its codes to f32 as before, narrows them to bf16 (exact: FP8 values have 4 significant bits)
// and multiplies them in f32 with f32 sums: a named matmul on bf16 operands for the 2-D GEMM,
// each product widened in the batched generic one (an activation x activation matmul).
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx32.4x32
// CHECK-SAME: qmlir.gemm_operands = "bf16"
// CHECK: linalg.generic
// CHECK: %[[A:.*]] = arith.select %{{.*}} : f32
// CHECK-NEXT: %[[AN:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[AN]] : bf16
// CHECK-NEXT: } -> tensor<?x32xbf16>
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: } -> tensor<4x32xbf16>
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x32xbf16>, tensor<4x32xbf16>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nn.2x3x8.2x8x5
// CHECK-SAME: qmlir.gemm_operands = "bf16"
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %[[S:.*]]: f32):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[XW]], %[[YW]] : f32
// CHECK-NEXT: arith.addf %[[S]], %[[P]] : f32

// mxfp8 (FP8 x 2^k) and nvfp4 (E2M1 x E4M3, at most 6 significant bits) are exact in bf16 too.
// MX-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.Dx32.4x32
// MX-SAME: qmlir.gemm_operands = "bf16"
// MX: linalg.matmul {{.*}} : tensor<?x32xbf16>, tensor<4x32xbf16>)
// NV-LABEL: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx16.4x16
// NV-SAME: qmlir.gemm_operands = "bf16"
// NV: linalg.matmul {{.*}} : tensor<?x32xbf16>, tensor<4x32xbf16>)

// fp8-block: FP8 x an f32 block scale is exact in bf16 only when the scale is a power of two, as
// the compute_scale behind both operands' scales says (pow2_scales, the default); otherwise the
// GEMM keeps f32 operands.
// BLOCK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx32.4x32
// BLOCK-SAME: qmlir.gemm_operands = "bf16"
// BLOCK: linalg.matmul {{.*}} : tensor<?x32xbf16>, tensor<4x32xbf16>)
// KEPT-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx32.4x32
// KEPT-NOT: gemm_operands
// KEPT-NOT: bf16
// KEPT: linalg.matmul {{.*}} : tensor<?x32xf32>, tensor<4x32xf32>)

// dtype=f32 leaves the GEMMs as they are.
// F32-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx32.4x32
// F32-NOT: gemm_operands
// F32-NOT: bf16
// F32: linalg.matmul {{.*}} : tensor<?x32xf32>, tensor<4x32xf32>)
// BAD: gemm operands must be one of f32, bf16, not 'f16'
func.func @linear(%x: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,4],f32> {
  %w = torch.vtensor.literal(dense<[
    [0.086, 0.205, 0.083, -0.326, 0.226, 0.112, -0.134, 0.145, 0.091, 0.074, 0.007, 0.137, -0.184, -0.041, -0.121, 0.150, 0.010, -0.073, -0.195, -0.064, 0.002, -0.069, 0.324, 0.252, -0.678, -0.472, -0.044, -0.106, 0.053, 0.054, 0.529, -0.278],
    [-0.094, 0.511, 0.162, 0.166, -0.129, -0.412, 0.042, 0.027, -0.307, -0.171, -0.018, -0.236, -0.025, 0.024, 0.009, -0.127, 0.148, 0.223, 0.080, -0.205, 0.183, -0.125, 0.220, -0.268, 0.229, -0.005, -0.312, -0.078, 0.014, 0.068, -0.246, -0.277],
    [0.050, -0.117, 0.059, 0.190, -0.412, 0.064, 0.306, -0.074, -0.203, 0.188, 0.063, 0.224, -0.086, -0.370, -0.028, -0.111, 0.194, 0.048, -0.408, -0.299, 0.221, 0.170, -0.160, -0.000, 0.111, 0.117, 0.219, 0.064, -0.024, -0.065, 0.264, -0.563],
    [-0.035, 0.008, -0.356, 0.083, -0.163, 0.216, -0.031, 0.167, 0.305, 0.096, -0.219, -0.379, 0.438, -0.028, -0.172, 0.036, -0.048, 0.213, 0.008, 0.003, -0.179, 0.117, -0.258, 0.166, 0.381, -0.381, -0.617, 0.154, 0.637, -0.250, -0.313, 0.147]]> : tensor<4x32xf32>) : !torch.vtensor<[4,32],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,32],f32>, !torch.vtensor<[4,32],f32>, !torch.none -> !torch.vtensor<[?,4],f32>
  return %0 : !torch.vtensor<[?,4],f32>
}

func.func @scores(%q: !torch.vtensor<[2,3,8],f32>, %k: !torch.vtensor<[2,8,5],f32>) -> !torch.vtensor<[2,3,5],f32> {
  %0 = torch.aten.bmm %q, %k : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[2,8,5],f32> -> !torch.vtensor<[2,3,5],f32>
  return %0 : !torch.vtensor<[2,3,5],f32>
}
