// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p prefill-gemm %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p prefill-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'gemm-operands{dtype=bf16}' -p prefill-gemm %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'gemm-operands{dtype=bf16}' -p prefill-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=BLOCKL
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block pow2_scales=false}' -p 'gemm-operands{dtype=bf16}' -p prefill-gemm %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'gemm-operands{dtype=bf16}' -p compact-block-scales -p prefill-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p compact-block-scales -p prefill-gemm %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'gemm-operands{dtype=bf16}' -p compact-block-scales -p prefill-gemm -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=NVF

// prefill-gemm marks the per-tensor FP8 GEMMs of many rows (a dynamic number, two) and no other:
// not the one-row GEMM (decode-gemv's), not a K that is no multiple of 32, not an N that is no
// multiple of 16.
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// MARK-NOT: qmlir.codes_gemm =
// MARK-SAME: qmlir.gemv = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// MARK-SAME: qmlir.codes_gemm = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.64x128
// MARK-SAME: qmlir.codes_gemm = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x96.64x96
// MARK-SAME: qmlir.codes_gemm = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x120.64x120
// MARK-NOT: qmlir.codes_gemm =
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.40x128
// MARK-NOT: qmlir.codes_gemm =

// lower-named-ops writes a marked GEMM as two dispatches of hand-written executables: A's codes
// decoded and tiled (16 rows, pairs of K as 32-bit words), then the GEMM over B's codes as
// stored: per 16 rows of B and K block (128 here, all of K), the rows' codes decoded by byte
// tables two rows at a time and transposed into a panel on the stack, then per 16 rows of x one
// vdpbf16ps per row and pair of K, the pair broadcast. Rows past M: a last tile whose stores are
// guarded. The per-tensor scales multiply the sums beside the dispatch, as the data-tiled GEMM's
// epilogue does.
// CHECK: stream.executable private @[[XEXE:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128\$x_executable]] {
// CHECK: func.func @[[XFN:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128\$x]](%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %[[XM:.*]]: index)
// CHECK: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x128xi8>{%[[XM]]}
// CHECK: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x64x16xi32>{%{{.*}}}
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-64: vector.shuffle %{{.*}}, %{{.*}} [{{.*}}] : vector<16xi32>, vector<16xi32>
// CHECK-COUNT-16: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %c0] : memref<?x64x16xi32>, vector<16xi32>
// CHECK: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128\$gemm_executable]] {
// CHECK: func.func @[[FN:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128\$gemm]](
// CHECK: %[[W:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x128xi8>
// CHECK: %[[PANEL:.*]] = memref.alloca() : memref<64x16xi32>
// CHECK: scf.for %{{.*}} = %c0 to %c128{{.*}} step %c128{{.*}} {
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<32xi8>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-16: vector.store %{{.*}}, %[[PANEL]][%{{.*}}, %c0] : memref<64x16xi32>, vector<16xi32>
// Each whole tile prefetches its share of the next panel's codes: 16 rows x 2 lines of 64 bytes
// over the 32 tiles of 512 rows, one line a tile.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16 {
// CHECK: memref.prefetch %[[W]][%{{.*}}, %{{.*}}], read, locality<3>, data : memref<64x128xi8>
// CHECK: vector.load %[[PANEL]][%{{.*}}, %c0] : memref<64x16xi32>, vector<16xi32>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: scf.yield
// At the last block of K (here the only one) the sums go to the outputs, row-major; before it
// into the f32 sums, a 16 x 16 block a tile and strip of 16 outputs.
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-16: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x64xf32>, vector<16xf32>
// CHECK: } else {
// CHECK-COUNT-16: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0] : memref<?x4x16x16xf32>, vector<16xf32>
// CHECK: scf.if
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// CHECK-SAME: qmlir.codes_gemm = "avx512bf16"
// CHECK: %[[XP:.*]] = flow.dispatch @[[XEXE]]::@[[XFN]]
// CHECK: %[[ACC:.*]]:2 = flow.dispatch @[[EXE]]::@[[FN]][%{{.*}}](%[[XP]], %arg2, %{{.*}}) : (tensor<?x64x16xi32>{%{{.*}}}, tensor<64x128xi8>, index) -> (tensor<?x4x16x16xf32>{%{{.*}}}, tensor<?x64xf32>{%{{.*}}})
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg1, %arg3 : tensor<?x64xf32>, tensor<f32>, tensor<f32>)
// CHECK: %[[ALPHA:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.mulf %{{.*}}, %[[ALPHA]] : f32

// fp8-block's GEMMs (power-of-two scales, multiplied in bf16: gemm-operands' proof that the
// dequantized values are exact there) are taken, K a multiple of 128; with f32 operands
// (scales not powers of two, or gemm-operands not run) they are not.
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx128.64x128
// BLOCK-SAME: qmlir.codes_gemm = "avx512bf16"
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.2x96.64x96
// BLOCK-NOT: qmlir.codes_gemm =
// KEPT-NOT: qmlir.codes_gemm =

// Block scales: A's read by the tiling executable (fp8-block's block1d [K blocks, rows padded to
// 4] f32), B's by the GEMM's panel decode (block2d [N / 128, K blocks]); each two rows' 64
// values widened to f32, times their rows' scales, rounded to bf16 (the dequantize's values,
// by vcvtne2ps2bf16, 32 an instruction); the sums are not scaled after.
// BLOCKL: func.func @{{.*}}Dx128.64x128$x(%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: index)
// BLOCKL: stream.binding.subspan %{{.*}} : !stream.binding -> memref<1x?xf32>{%{{.*}}}
// BLOCKL: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x?xf32>
// BLOCKL: arith.extf %{{.*}} : vector<64xbf16> to vector<64xf32>
// BLOCKL-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
// BLOCKL-NOT: arith.truncf %{{.*}} : vector<64xf32> to vector<64xbf16>
// BLOCKL: func.func @{{.*}}Dx128.64x128$gemm(
// BLOCKL: stream.binding.subspan %{{.*}} : !stream.binding -> memref<1x4xf32>
// BLOCKL: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// BLOCKL: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x4xf32>
// BLOCKL: arith.mulf %{{.*}}, %{{.*}} : vector<64xf32>
// mxfp8's E8M0 scales (and nvfp4's E4M3 ones): the 16 rows' scales of a K block decoded to f32
// at once as it begins, two rows' a step (E8M0: each code shifted into an f32's exponent), into
// a buffer on the stack the panel's steps read.
// MX: func.func @{{.*}}Dx128.64x128.compact_ab$x(
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x4xi8>{%{{.*}}}
// MX: %[[SDEC:.*]] = memref.alloca() : memref<16x32xf32>
// MX: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x4xi8>, vector<4xi8>
// MX: arith.shli %{{.*}}, %{{.*}} : vector<64xi32>
// MX: vector.store %{{.*}}, %[[SDEC]][%{{.*}}, %{{.*}}] : memref<16x32xf32>, vector<32xf32>
// MX: memref.load %[[SDEC]][%{{.*}}, %{{.*}}] : memref<16x32xf32>
// MX: func.func @{{.*}}Dx128.64x128.compact_ab$gemm(
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x4xi8>
// MX: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x4xi8>, vector<4xi8>
// MX: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x32xf32>
// nvfp4: E2M1 codes two a byte (16 bytes a row and step, their nibbles' values from 16-entry
// tables, even and odd elements interleaved back into K order), each row's two blocks of 16
// times their E4M3 scales; the global scales multiply the sums beside the dispatch.
// NVF: func.func @{{.*}}Dx64.64x64.compact_ab$x(
// NVF: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x64xi8>{%{{.*}}}
// NVF: stream.binding.subspan %{{.*}} : !stream.binding -> memref<?x8xi8>{%{{.*}}}
// NVF: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x8xi8>, vector<8xi8>
// NVF-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// NVF: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x32xf32>, vector<32xf32>
// NVF: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x64xi8>, vector<16xi8>
// NVF-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.permvar.qi.512"
// NVF: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x32xf32>
// NVF: func.func @{{.*}}Dx64.64x64.compact_ab$gemm(
// NVF: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x8xi8>
// NVF: vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x8xi8>, vector<8xi8>
// NVF: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.Dx64.64x64.compact_ab(
// NVF: ins(%{{.*}}, %arg2, %arg5 : tensor<?x64xf32>, tensor<f32>, tensor<f32>)

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

func.func @k96(%x: !torch.vtensor<[2,96],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x96xf32>) : !torch.vtensor<[64,96],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,96],f32>, !torch.vtensor<[64,96],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}

func.func @k120(%x: !torch.vtensor<[2,120],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x120xf32>) : !torch.vtensor<[64,120],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,120],f32>, !torch.vtensor<[64,120],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}

func.func @n40(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,40],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<40x128xf32>) : !torch.vtensor<[40,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[40,128],f32>, !torch.none -> !torch.vtensor<[2,40],f32>
  return %0 : !torch.vtensor<[2,40],f32>
}
