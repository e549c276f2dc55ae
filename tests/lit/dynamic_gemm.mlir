// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p dynamic-gemm %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p prefill-gemm -p dynamic-gemm %s | FileCheck %s --check-prefix=CODES
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p dynamic-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'gemm-operands{dtype=bf16}' -p compact-block-scales -p dynamic-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=NVF
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p dynamic-gemm %s | FileCheck %s --check-prefix=F32

// dynamic-gemm marks the GEMMs of a dynamic number of rows whose operands are decoded to bf16
// (N a multiple of 16, K of 32) and no other: not a static number of rows (the static
// artifact's data-tiled GEMM writes its outputs in place), not the one-row GEMM (decode-gemv's),
// not K = 120 nor N = 40.
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// MARK-NOT: qmlir.bf16_gemm =
// MARK-SAME: qmlir.gemv = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// MARK-SAME: qmlir.bf16_gemm = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.64x128
// MARK-NOT: qmlir.bf16_gemm =
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx120.64x120
// MARK-NOT: qmlir.bf16_gemm =
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.40x128
// MARK-NOT: qmlir.bf16_gemm =
// f32 GEMM operands (no gemm-operands: a CPU without AVX512-BF16 multiplies f32 copies): none.
// F32-NOT: qmlir.bf16_gemm =
// A GEMM prefill-gemm took (its weights' codes read each call) stays its.
// CODES: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// CODES-NOT: qmlir.bf16_gemm =
// CODES-SAME: qmlir.codes_gemm = "avx512bf16"

// lower-named-ops: the marked GEMM's operands are decoded as before (B's codes to bf16 once the
// weights are folded: a constant IREE computes when the module loads), then multiplied by the
// bf16 GEMM's two executables (A tiled; then B read as stored panels, each line where it is,
// no panel built on the stack nor prefetched; vdpbf16ps), f32 sums stored
// row-major; the per-tensor scales multiply them after, as the data-tiled GEMM's epilogue did.
// No data-tiled linalg.matmul is left in it.
// CHECK: stream.executable private @{{.*}}per_tensor.nt.Dx128.64x128$bf16_gemm$x_executable
// CHECK: stream.executable private @{{.*}}per_tensor.nt.Dx128.64x128$bf16_gemm$gemm_executable
// CHECK: %[[W:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<4x64x16xi32>
// CHECK-NOT: memref.alloca
// CHECK-NOT: memref.prefetch
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}, %c0] : memref<4x64x16xi32>, vector<16xi32>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: func.func private @[[GEMM:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128\$bf16_gemm]](%{{.*}}: tensor<?x128xbf16>, %{{.*}}: tensor<64x128xbf16>) -> tensor<?x64xf32>
// CHECK: flow.dispatch @{{.*}}$bf16_gemm$x_executable
// B laid out as the GEMM's panels ([N / 16, K / 2, 16 x 2]) in the function, before the GEMM:
// a constant's layout, which IREE computes when the module loads.
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x16x64x2xbf16>) outs(%{{.*}} : tensor<4x64x16x2xbf16>) permutation = [0, 2, 1, 3]
// CHECK: flow.dispatch @{{.*}}$bf16_gemm$gemm_executable
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128(
// CHECK-SAME: qmlir.bf16_gemm = "avx512bf16"
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x128xbf16>)
// CHECK: %[[B:[0-9a-z_]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64x128xbf16>)
// CHECK-NOT: linalg.matmul
// CHECK: %[[ACC:.*]] = call @[[GEMM]](%{{.*}}, %[[B]]) : (tensor<?x128xbf16>, tensor<64x128xbf16>) -> tensor<?x64xf32>
// CHECK-NOT: linalg.matmul
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: return
// An unmarked GEMM keeps IREE's data-tiled matmul.
// CHECK-LABEL: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx120.64x120(
// CHECK: linalg.matmul

// nvfp4: E2M1 codes two a byte, K = 128 after decoding (64 bytes a row); the global scales
// multiply the sums after the call.
// NVF: func.func private @[[NGEMM:qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab\$bf16_gemm]](%{{.*}}: tensor<?x128xbf16>, %{{.*}}: tensor<64x128xbf16>) -> tensor<?x64xf32>
// NVF-LABEL: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab(
// NVF-SAME: qmlir.bf16_gemm = "avx512bf16"
// NVF-SAME: qmlir.scale_format = "nvfp4"
// NVF-NOT: linalg.matmul
// NVF: call @[[NGEMM]](
// NVF-NOT: linalg.matmul
// NVF: return

func.func @one_row(%x: !torch.vtensor<[1,128],f32>) -> !torch.vtensor<[1,64],f32> {
  %w = torch.vtensor.literal(dense<0.25> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[1,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[1,64],f32>
  return %0 : !torch.vtensor<[1,64],f32>
}

func.func @rows(%x: !torch.vtensor<[?,128],f32>) -> !torch.vtensor<[?,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[?,64],f32>
  return %0 : !torch.vtensor<[?,64],f32>
}

func.func @two_rows(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.75> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}

func.func @k120(%x: !torch.vtensor<[?,120],f32>) -> !torch.vtensor<[?,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x120xf32>) : !torch.vtensor<[64,120],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,120],f32>, !torch.vtensor<[64,120],f32>, !torch.none -> !torch.vtensor<[?,64],f32>
  return %0 : !torch.vtensor<[?,64],f32>
}

func.func @n40(%x: !torch.vtensor<[?,128],f32>) -> !torch.vtensor<[?,40],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<40x128xf32>) : !torch.vtensor<[40,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[?,128],f32>, !torch.vtensor<[40,128],f32>, !torch.none -> !torch.vtensor<[?,40],f32>
  return %0 : !torch.vtensor<[?,40],f32>
}
