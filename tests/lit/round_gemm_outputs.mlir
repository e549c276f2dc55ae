// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p prefill-gemm -p round-gemm-outputs %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p prefill-gemm -p round-gemm-outputs -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=LOW
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'gemm-operands{dtype=bf16}' -p compact-block-scales -p prefill-gemm -p round-gemm-outputs -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p round-gemm-outputs %s | FileCheck %s --check-prefix=UNMARKED

// A codes GEMM whose f32 result a bf16 linear only rounds to bf16 calls a declaration of its
// own, marked rounded, whose result is bf16: no conversion follows it. With a bias (added in
// f32 before the rounding) and in an f32 model the GEMM keeps its f32 result.
// CHECK-LABEL: func.func @linear
// CHECK: %[[R:.*]] = call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64.rounded(%{{.*}}) {qmlir.recipe = "fp8-current"{{.*}}} : ({{.*}}) -> tensor<4x32xbf16>
// CHECK-NEXT: %[[T:.*]] = torch_c.from_builtin_tensor %[[R]] : tensor<4x32xbf16> -> !torch.vtensor<[4,32],bf16>
// CHECK-NEXT: return %[[T]]
// CHECK-LABEL: func.func @biased
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64(%{{.*}}) {{.*}} -> tensor<4x32xf32>
// CHECK: torch.aten.add.Tensor
// CHECK: torch.prims.convert_element_type %{{.*}} -> !torch.vtensor<[4,32],bf16>
// CHECK-LABEL: func.func @wide
// CHECK: call @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64(%{{.*}}) {{.*}} -> tensor<4x32xf32>
// CHECK-NOT: convert_element_type
// CHECK: return
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64(
// CHECK-SAME: -> tensor<4x32xf32>
// CHECK-NOT: qmlir.rounded
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64.rounded(
// CHECK-SAME: -> tensor<4x32xbf16>
// CHECK-SAME: qmlir.codes_gemm = "avx512bf16"
// CHECK-SAME: qmlir.rounded = true

// Lowered: the GEMM's dispatch takes the two per-tensor scales and gives the f32 sums (16 x 16
// blocks, a tile's rows of a strip of 16 outputs contiguous) and the bf16 outputs; at the last
// block of K (here the only one, K 64) each row's sums are multiplied by sa * sb and rounded to
// bf16 as they are stored, before it they are stored as f32.
// LOW: func.func @[[FN:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64.rounded\$gemm]](%[[X:.*]]: !stream.binding, %[[W:.*]]: !stream.binding, %[[SA:.*]]: !stream.binding, %[[SB:.*]]: !stream.binding, %[[SUMS:.*]]: !stream.binding, %[[OUT:.*]]: !stream.binding, %{{.*}}: index)
// LOW-DAG: %[[O16:.*]] = stream.binding.subspan %[[OUT]][%{{.*}}] : !stream.binding -> memref<?x32xbf16>
// LOW-DAG: stream.binding.subspan %[[SUMS]][%{{.*}}] : !stream.binding -> memref<?x2x16x16xf32>
// LOW-DAG: %[[SAR:.*]] = stream.binding.subspan %[[SA]][%{{.*}}] : !stream.binding -> memref<f32>
// LOW-DAG: %[[SBR:.*]] = stream.binding.subspan %[[SB]][%{{.*}}] : !stream.binding -> memref<f32>
// LOW-DAG: %[[SAV:.*]] = memref.load %[[SAR]][] : memref<f32>
// LOW-DAG: %[[SBV:.*]] = memref.load %[[SBR]][] : memref<f32>
// LOW: %[[ALPHA:.*]] = arith.mulf %[[SAV]], %[[SBV]] : f32
// LOW: %[[AV:.*]] = vector.broadcast %[[ALPHA]] : f32 to vector<16xf32>
// LOW: scf.yield {{.*}} : vector<16xf32>, vector<16xf32>
// LOW: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// LOW-NEXT: scf.if %[[LAST]] {
// LOW-COUNT-16: arith.mulf %{{.*}}, %[[AV]] : vector<16xf32>
// LOW-NOT: vector.store %{{.*}} : memref<?x2x16x16xf32>
// LOW: } else {
// LOW-COUNT-16: vector.store %{{.*}} : memref<?x2x16x16xf32>, vector<16xf32>
// LOW: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.4x64.32x64.rounded(%{{.*}}: tensor<4x64xi8>, %[[DSA:.*]]: tensor<f32>, %[[DB:.*]]: tensor<32x64xi8>, %[[DSB:.*]]: tensor<f32>) -> tensor<4x32xbf16>
// LOW: %[[D:.*]]:2 = flow.dispatch @{{.*}}rounded$gemm_executable::@[[FN]][%{{.*}}](%{{.*}}, %[[DB]], %[[DSA]], %[[DSB]], %{{.*}}) : ({{.*}}) -> (tensor<?x2x16x16xf32>{%{{.*}}}, tensor<?x32xbf16>{%{{.*}}})
// LOW: tensor.cast %[[D]]#1 : tensor<?x32xbf16> to tensor<4x32xbf16>
// LOW-NOT: linalg.generic
// LOW: return %{{.*}} : tensor<4x32xbf16>

// mxfp8 (block scales multiplied in as the panels decode; no per-tensor scales): no scalars
// are read, the sums rounded as they are.
// MX: func.func @{{.*}}.rounded$gemm(%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: index)
// MX-NOT: memref<f32>
// MX: scf.if
// MX-NOT: arith.mulf %{{.*}} : vector<16xf32>
// MX: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>

// Without prefill-gemm no GEMM is a codes GEMM: nothing is rounded.
// UNMARKED-NOT: rounded

func.func @linear(%x: !torch.vtensor<[4,64],bf16>) -> !torch.vtensor<[4,32],bf16> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<32x64xbf16>) : !torch.vtensor<[32,64],bf16>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,64],bf16>, !torch.vtensor<[32,64],bf16>, !torch.none -> !torch.vtensor<[4,32],bf16>
  return %0 : !torch.vtensor<[4,32],bf16>
}

func.func @biased(%x: !torch.vtensor<[4,64],bf16>) -> !torch.vtensor<[4,32],bf16> {
  %w = torch.vtensor.literal(dense<0.25> : tensor<32x64xbf16>) : !torch.vtensor<[32,64],bf16>
  %b = torch.vtensor.literal(dense<1.0> : tensor<32xbf16>) : !torch.vtensor<[32],bf16>
  %0 = torch.aten.linear %x, %w, %b : !torch.vtensor<[4,64],bf16>, !torch.vtensor<[32,64],bf16>, !torch.vtensor<[32],bf16> -> !torch.vtensor<[4,32],bf16>
  return %0 : !torch.vtensor<[4,32],bf16>
}

func.func @wide(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,32],f32> {
  %w = torch.vtensor.literal(dense<0.125> : tensor<32x64xf32>) : !torch.vtensor<[32,64],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[4,64],f32>, !torch.vtensor<[32,64],f32>, !torch.none -> !torch.vtensor<[4,32],f32>
  return %0 : !torch.vtensor<[4,32],f32>
}
