// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=MARK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=BLOCK
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block pow2_scales=false}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=AVX2
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'decode-gemv{isa=avx2}' %s | FileCheck %s --check-prefix=BLOCK2
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=BLOCK2L
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-block pow2_scales=false}' -p 'decode-gemv{isa=avx2}' %s | FileCheck %s --check-prefix=KEPT
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp8}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX2L
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=NVF
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp4}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=MX4
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp4}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=MX4512
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'gemm-operands{dtype=bf16}' -p decode-gemv %s | FileCheck %s --check-prefix=NVF512
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=nvfp4}' -p 'gemm-operands{dtype=bf16}' -p 'decode-gemv{fp4_isa=avx512bf16}' %s | FileCheck %s --check-prefix=NVF512K
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=mxfp4}' -p 'gemm-operands{dtype=bf16}' -p 'decode-gemv{fp4_isa=avx512bf16}' %s | FileCheck %s --check-prefix=MX4512K
// RUN: %qmlir-opt -p 'quantize-matmuls{recipe=fp8-rowwise}' -p 'decode-gemv{isa=avx2}' -p fold-constant-quantize -p lower-named-ops %s | FileCheck %s --check-prefix=ROWS
// RUN: not %qmlir-opt -p 'quantize-matmuls{recipe=fp8-current}' -p 'decode-gemv{isa=sse2}' %s 2>&1 | FileCheck %s --check-prefix=BADISA

// decode-gemv marks the one-row per-tensor FP8 GEMM (a decode step's: A [1, 128], B [64, 128])
// and no other: not a dynamic number of rows, not a K that is no multiple of 64, not two rows.
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// MARK-SAME: qmlir.gemv = "avx512bf16"
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// MARK-NOT: qmlir.gemv
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x96.64x96
// MARK-NOT: qmlir.gemv
// MARK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.2x128.64x128
// MARK-NOT: qmlir.gemv

// lower-named-ops writes the marked GEMM as a dispatch of a hand-written executable of its own:
// B's codes (i8) go in as stored, A decoded to bf16; 8 rows a workgroup (64 rows: 8 workgroups),
// one after another, each step 2 x 64 codes decoded with two byte-table lookups and multiplied
// with vdpbf16ps; the lanes summed at the row's end; the scales multiply the sums.
// CHECK: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv_executable]] {
// CHECK: stream.executable.export public @[[FN:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv]] workgroups
// CHECK: func.func @[[FN]](%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding)
// CHECK: %[[W:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x128xi8>
// CHECK-NOT: memref.prefetch
// CHECK: %[[ROW0:.*]] = arith.muli %workgroup_id_x, %c8 : index
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c128 iter_args
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<64xi8>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<64xi8>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.qi.512"
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// CHECK-NOT: memref.prefetch
// CHECK: scf.yield
// CHECK: vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// CHECK: memref.store
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// CHECK-SAME: qmlir.gemv = "avx512bf16"
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: flow.dispatch @[[EXE]]::@[[FN]][%{{.*}}](%{{.*}}, %arg2) : (tensor<128xbf16>, tensor<64x128xi8>) -> tensor<64xf32>
// CHECK: arith.mulf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
// CHECK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.Dx128.64x128
// CHECK-NOT: flow.dispatch
// CHECK: linalg.matmul

// Block scales that are powers of two (fp8-block's default, mxfp8's E8M0; bf16 GEMM operands)
// take it too, K a multiple of the block (128, 32); fp8-block with f32 scales does not (its
// products would round).
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128
// BLOCK-SAME: qmlir.gemv = "avx512bf16"
// BLOCK: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.Dx128.64x128
// BLOCK-NOT: qmlir.gemv
// KEPT: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128
// KEPT-NOT: qmlir.gemv

// mxfp8: both operands' E8M0 scales unswizzled outside the executable, x's decoded to f32 there,
// the rows' codes decoded in the loop; each 32 codes' products summed on their own and added
// times the two scales of their block.
// MX: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x128.64x128\$gemv_executable]] {
// MX: func.func @{{.*}}(%{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding, %{{.*}}: !stream.binding)
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<4xf32>
// MX: stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x4xi8>
// MX: memref.load %{{.*}} : memref<64x4xi8>
// MX: arith.shli
// MX: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%cst
// MX: vector.fma
// MX: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x128.64x128
// MX: arith.shli %{{.*}}, %{{.*}} : i32
// MX: flow.dispatch @[[EXE]]::@{{.*}}(%{{.*}}, %{{.*}}, %arg2, %{{.*}}) : (tensor<128xbf16>, tensor<4xf32>, tensor<64x128xi8>, tensor<64x4xi8>) -> tensor<64xf32>
// AVX2 (decode-gemv{isa=avx2}): the codes 2048 bytes past each step's prefetched (the row-major
// weight viewed flat, the index held at its last byte); 32 codes a 256-bit load, each widened to 32 bits and shifted
// into an f32's exponent and mantissa (E4M3's value times 2^-120, its subnormals f32 subnormals;
// no compare, blend or NaN carry in the loop) and multiplied into two 16-lane f32 accumulators
// with FMAs (two a step each); one chunk of 64 codes a step; x decoded to f32 times 2^112, each
// row's sum times 2^8. The workgroup clears MXCSR's denormals-are-zero bit before its loop and
// restores the worker's mode after it. NaN's magnitude 0x7F, which that decode reads as a
// number, makes its row NaN after the dispatch (each row's largest magnitude, from B alone: a
// weight's is computed once, at load). The gemm-operands pass need not run: block scales are
// proven powers of two from their chains (BLOCK2), as for KEPT's.
// AVX2: stream.executable private @[[EXE:qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128\$gemv_executable]] {
// AVX2: memref<128xf32>
// AVX2: %[[W:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x128xi8>
// AVX2: %[[FLAT:.*]] = memref.collapse_shape %[[W]] {{\[\[}}0, 1]] : memref<64x128xi8> into memref<8192xi8>
// AVX2: %[[AHEAD:.*]] = arith.constant 2048 : index
// AVX2: %[[LAST:.*]] = arith.constant 8191 : index
// AVX2: %[[SAVED:.*]] = llvm.alloca %{{.*}} x i32 : (i32) -> !llvm.ptr
// AVX2: llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[SAVED]]) : (!llvm.ptr) -> ()
// AVX2: %[[MODE:.*]] = llvm.load %[[SAVED]] : !llvm.ptr -> i32
// AVX2: %[[NO_DAZ:.*]] = llvm.and %[[MODE]], %{{.*}} : i32
// AVX2: llvm.store %[[NO_DAZ]], %[[SLOT:.*]] : i32, !llvm.ptr
// AVX2: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[SLOT]]) : (!llvm.ptr) -> ()
// AVX2: scf.for %[[K:.*]] = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>)
// AVX2: %[[HERE:.*]] = arith.addi %{{.*}}, %[[K]] : index
// AVX2: %[[FAR:.*]] = arith.addi %[[HERE]], %[[AHEAD]] : index
// AVX2: %[[AT:.*]] = arith.minui %[[FAR]], %[[LAST]] : index
// AVX2: memref.prefetch %[[FLAT]][%[[AT]]], read, locality<0>, data : memref<8192xi8>
// AVX2: vector.load %{{.*}}[%{{.*}}] : memref<128xf32>, vector<32xf32>
// AVX2: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<32xi8>
// AVX2: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x128xi8>, vector<32xi8>
// AVX2: arith.extsi %{{.*}} : vector<32xi8> to vector<32xi32>
// AVX2-NOT: arith.select
// AVX2-NOT: arith.extf
// AVX2: arith.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
// AVX2-COUNT-4: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// AVX2: %[[TOTAL:.*]] = vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// AVX2: arith.mulf %[[TOTAL]], %{{.*}} : f32
// AVX2: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[SAVED]]) : (!llvm.ptr) -> ()
// AVX2-NEXT: return
// AVX2: func.func private @qmlir.scaled_matmul.e4m3xe4m3.per_tensor.nt.1x128.64x128
// AVX2-SAME: qmlir.gemv = "avx2"
// AVX2: arith.constant 5.19229686E+33 : f32
// AVX2: %[[SUMS:.*]] = flow.dispatch @[[EXE]]::@{{.*}}(%{{.*}}, %arg2) : (tensor<128xf32>, tensor<64x128xi8>) -> tensor<64xf32>
// AVX2: %[[MAGS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg2 : tensor<64x128xi8>)
// AVX2: arith.andi %{{.*}}, %{{.*}} : i8
// AVX2: arith.maxui
// AVX2: linalg.generic {{.*}} ins(%[[SUMS]], %[[MAGS]] : tensor<64xf32>, tensor<64xi8>)
// AVX2: arith.cmpi eq, %{{.*}}, %{{.*}} : i8
// AVX2: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// BLOCK2: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128
// BLOCK2-SAME: qmlir.gemv = "avx2"
// fp8-block in AVX2 code: a workgroup's rows lie in one row block of 128, so each K block's
// factor (x's scale times the row block's) is made once, before the rows' loop, into the
// workgroup's stack; a loop step's 64 codes lie in one K block: their products are two sums of
// 32 in 8 lanes (a multiply, three FMAs each), each added times the block's one factor (one
// load a step, no scalar multiply); x's block scales carry the 2^8 the decode leaves out
// (multiplied in beside the dispatch).
// BLOCK2L: stream.executable private @{{.*}}block1dxblock2d.nt.1x128.64x128$gemv_executable
// BLOCK2L: %[[XS:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<1xf32>
// BLOCK2L: %[[WS:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<1x4xf32>
// BLOCK2L: %[[FACTORS:.*]] = memref.alloca() : memref<1xf32>
// BLOCK2L: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"
// BLOCK2L: %[[NB:.*]] = arith.divui %{{.*}}, %c128{{.*}} : index
// BLOCK2L: scf.for %[[KB:.*]] = %c0 to %{{.*}} step %c1 {
// BLOCK2L-NEXT: %[[SX:.*]] = memref.load %[[XS]][%[[KB]]] : memref<1xf32>
// BLOCK2L-NEXT: %[[SW:.*]] = memref.load %[[WS]][%[[NB]], %[[KB]]] : memref<1x4xf32>
// BLOCK2L-NEXT: %[[T:.*]] = arith.mulf %[[SX]], %[[SW]] : f32
// BLOCK2L-NEXT: memref.store %[[T]], %[[FACTORS]][%[[KB]]] : memref<1xf32>
// BLOCK2L: scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>)
// BLOCK2L-COUNT-2: arith.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
// BLOCK2L: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// BLOCK2L-COUNT-3: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// BLOCK2L-NEXT: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// BLOCK2L-COUNT-3: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// BLOCK2L-NEXT: arith.divui
// BLOCK2L-NEXT: %[[S:.*]] = memref.load %[[FACTORS]][%{{.*}}] : memref<1xf32>
// BLOCK2L-NEXT: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// BLOCK2L-NEXT: vector.fma %{{.*}}, %[[SV]], %{{.*}} : vector<8xf32>
// BLOCK2L-NEXT: vector.fma %{{.*}}, %[[SV]], %{{.*}} : vector<8xf32>
// BLOCK2L-NEXT: scf.yield
// BLOCK2L: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// BLOCK2L: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1dxblock2d.nt.1x128.64x128(
// BLOCK2L: %[[XS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1xf32>) outs(%{{.*}} : tensor<1xf32>)
// BLOCK2L-NEXT: ^bb0
// BLOCK2L-NEXT: arith.constant 2.560000e+02 : f32
// BLOCK2L-NEXT: arith.mulf
// BLOCK2L: flow.dispatch @{{.*}}(%{{.*}}, %[[XS]], %arg2, %{{.*}})
// mxfp8 in AVX2 code: each row's factors (its E8M0 scale codes decoded, 255 NaN, times x's
// scales) made before its loop into the workgroup's stack, 8 at a time by vector and the rest
// (4 K blocks here: all of them) one by one; a loop step's two blocks of 32 codes, each
// block's products summed in 8 lanes and added times its factor (one load each).
// MX2L: stream.executable private @{{.*}}mx.nt.1x128.64x128{{.*}}$gemv_executable
// MX2L: %[[XS:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<4xf32>
// MX2L: %[[WS:.*]] = stream.binding.subspan %{{.*}} : !stream.binding -> memref<64x4xi8>
// MX2L: %[[FACTORS:.*]] = memref.alloca() : memref<4xf32>
// MX2L: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// MX2L: %[[N:.*]] = arith.addi
// MX2L: scf.for %{{.*}} step %{{.*}} {
// MX2L: vector.load %[[WS]][%[[N]], %{{.*}}] : memref<64x4xi8>, vector<8xi8>
// MX2L: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// MX2L: vector.store %{{.*}}, %[[FACTORS]][%{{.*}}] : memref<4xf32>, vector<8xf32>
// MX2L: scf.for %[[TKB:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// MX2L-NEXT: %[[CODE:.*]] = memref.load %[[WS]][%[[N]], %[[TKB]]] : memref<64x4xi8>
// MX2L: arith.cmpi eq, %{{.*}}, %c255{{.*}} : i32
// MX2L: memref.store %{{.*}}, %[[FACTORS]][%[[TKB]]] : memref<4xf32>
// MX2L: scf.for %{{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>)
// MX2L-COUNT-2: arith.bitcast %{{.*}} : vector<32xi32> to vector<32xf32>
// MX2L: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// MX2L-COUNT-3: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// MX2L-NEXT: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// MX2L-COUNT-3: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// MX2L-NEXT: arith.divui
// MX2L-NEXT: arith.divui
// MX2L-NEXT: memref.load %[[FACTORS]][%{{.*}}] : memref<4xf32>
// MX2L-NEXT: memref.load %[[FACTORS]][%{{.*}}] : memref<4xf32>
// MX2L-NOT: memref.load
// MX2L: scf.yield
// MX2L: func.func private @qmlir.scaled_matmul.e4m3xe4m3.mx.nt.1x128.64x128
// MX2L-SAME: qmlir.gemv = "avx2"
// MX2L: flow.dispatch @{{.*}} : (tensor<128xf32>, tensor<4xf32>, tensor<64x128xi8>, tensor<64x4xi8>) -> tensor<64xf32>
// nvfp4 in AVX2 code, in integers: each code's value times 2 plus 12 from a 16-entry byte table
// (vpshufb), times x's values times 2 (signed bytes) by vpmaddubsw, each 4 bytes' products summed
// in 32 bits (vpmaddwd) less x's offsets (12 times x's sum there, a third operand), as f32 times
// their block's scales (2 lanes a block of 16 codes; the row's E4M3 scales through f16 with no
// NaN compare: a NaN scale makes its row NaN after the dispatch) into 8-lane accumulators; x's
// scales times 2^8 / 4 (the f16 decode's 2^-8, the integers' factor 4).
// NVF: stream.executable private @[[EXE:qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64\$gemv_executable]] {
// NVF: arith.constant dense<[12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0, 12, 13,
// NVF: scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xf32>)
// NVF-COUNT-4: llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"
// NVF-COUNT-4: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// NVF-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// NVF-COUNT-2: arith.subi %{{.*}}, %{{.*}} : vector<8xi32>
// NVF: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// NVF-NOT: arith.select
// NVF: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 1, 1, 2, 2, 3, 3]
// NVF-COUNT-2: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// NVF: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// NVF: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// NVF-SAME: qmlir.gemv = "avx2"
// NVF: arith.constant 6.400000e+01 : f32
// NVF: arith.extsi %{{.*}} : i8 to i32
// NVF: %[[SUMS4:.*]] = flow.dispatch @[[EXE]]::@{{.*}} : (tensor<128xi8>, tensor<8xf32>, tensor<16xi32>, tensor<64x64xi8>, tensor<64x8xi8>) -> tensor<64xf32>
// NVF: %[[MAGS4:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<64x8xi8>)
// NVF: linalg.generic {{.*}} ins(%[[SUMS4]], %[[MAGS4]] : tensor<64xf32>, tensor<64xi8>)
// mxfp4 (AVX2): nvfp4's integer loop, each 32-code block's E8M0 scales decoded in the loop as
// the f32 of their bits shifted (255: NaN, selected), four lanes a block; x's E8M0 scales times
// a quarter beside the dispatch; no global scales, no NaN-row pass
// MX4: stream.executable private @[[EXE:qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64\$gemv_executable]] {
// MX4: arith.constant dense<23> : vector<4xi32>
// MX4: scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xf32>)
// MX4-COUNT-4: llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// MX4-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// MX4: arith.shli %{{.*}}, %{{.*}} : vector<4xi32>
// MX4: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xf32>
// MX4: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 0, 1, 1, 1, 1]
// MX4: vector.shuffle %{{.*}}, %{{.*}} [2, 2, 2, 2, 3, 3, 3, 3]
// MX4-COUNT-2: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// MX4: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// MX4-SAME: qmlir.gemv = "avx2"
// MX4: arith.constant 2.500000e-01 : f32
// MX4: %[[SUMS5:.*]] = flow.dispatch @[[EXE]]::@{{.*}} : (tensor<128xi8>, tensor<4xf32>, tensor<16xi32>, tensor<64x64xi8>, tensor<64x4xi8>) -> tensor<64xf32>
// MX4-NEXT: tensor.expand_shape %[[SUMS5]]
// an AVX-512 target's FP4 GEMMs (mxfp4: no AVX-512 loop; nvfp4: slower there) take AVX2's
// integer loop; fp4_isa=avx512bf16 keeps nvfp4 on the AVX-512 loop and mxfp4 off any loop
// MX4512: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// MX4512-SAME: qmlir.gemm_operands = "bf16"
// MX4512-SAME: qmlir.gemv = "avx2"
// NVF512: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// NVF512-SAME: qmlir.gemv = "avx2"
// NVF512K: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// NVF512K-SAME: qmlir.gemv = "avx512bf16"
// MX4512K: func.func private @qmlir.scaled_matmul.e2m1xe2m1.mx.nt.1x64.64x64
// MX4512K-NOT: qmlir.gemv =
// fp8-rowwise: a scale per row (not powers of two) is no obstacle: the loop sums the codes'
// products as for per-tensor scales, and each row's sum is multiplied after the dispatch by x's
// scale_inv ([0, 0] of its block1d [1, 4]) and the row's ([0, n] of [1, pad4(N)])
// ROWS: func.func private @qmlir.scaled_matmul.e4m3xe4m3.block1d.nt.1x128.64x128
// ROWS-SAME: qmlir.gemv = "avx2"
// ROWS: %[[SUMS6:.*]] = flow.dispatch @{{.*}} : (tensor<128xf32>, tensor<64x128xi8>) -> tensor<64xf32>
// ROWS: linalg.generic {indexing_maps = [#{{.*}}, #[[ZERO:.*]], #[[ROW:.*]], #{{.*}}]
// ROWS-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<1x4xf32>, tensor<1x64xf32>)
// BADISA: decode-gemv isa must be one of avx512bf16, avx2, not 'sse2'
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

func.func @short_k(%x: !torch.vtensor<[1,96],f32>) -> !torch.vtensor<[1,64],f32> {
  %w = torch.vtensor.literal(dense<0.5> : tensor<64x96xf32>) : !torch.vtensor<[64,96],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[1,96],f32>, !torch.vtensor<[64,96],f32>, !torch.none -> !torch.vtensor<[1,64],f32>
  return %0 : !torch.vtensor<[1,64],f32>
}

func.func @two_rows(%x: !torch.vtensor<[2,128],f32>) -> !torch.vtensor<[2,64],f32> {
  %w = torch.vtensor.literal(dense<0.75> : tensor<64x128xf32>) : !torch.vtensor<[64,128],f32>
  %none = torch.constant.none
  %0 = torch.aten.linear %x, %w, %none : !torch.vtensor<[2,128],f32>, !torch.vtensor<[64,128],f32>, !torch.none -> !torch.vtensor<[2,64],f32>
  return %0 : !torch.vtensor<[2,64],f32>
}
