// RUN: %qmlir-opt -p prefill-attention %s | FileCheck %s
// RUN: %qmlir-opt -p "prefill-attention{isa=avx2}" %s | FileCheck %s --check-prefix=AVX2

// A prefill's grouped-query attention (4 query heads over 2 bf16 K/V heads, T dynamic, a
// per-query bool mask over 24 cache positions), as compiler/frontend/attention.py decomposes
// it: the softmax and both matmuls give way to a call of the tiled kernel, which takes K and V
// as the decomposition widened them to f32 (it transposes K and pads both) and the mask's rows.
// q and K hold bf16 values (widened from bf16): on AVX512-BF16 q . k runs on pairs of the head
// dim (vdpbf16ps), K laid out as [K/V heads, head dim / 2, keys x 2] bf16.
// CHECK: #[[PAIRS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 2 + d3)>
// CHECK-LABEL: func.func @main
// CHECK-NOT: torch.aten.softmax
// CHECK: %[[Q:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[1,2,?,16],f32> -> tensor<1x2x?x16xf32>
// CHECK: %[[K:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[1,2,24,16],f32> -> tensor<1x2x24x16xf32>
// CHECK: %[[V:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[1,2,24,16],f32> -> tensor<1x2x24x16xf32>
// CHECK: %[[M:.*]] = torch_c.to_builtin_tensor %{{.*}} : !torch.vtensor<[1,1,1,?,24],i1> -> tensor<1x1x1x?x24xi1>
// CHECK: call @qmlir.prefill_attention.pairs.1x2xDx16.1x2x24x16f32.fill1x1x1xDx24(%[[Q]], %[[K]], %[[V]], %[[M]])
// CHECK-NOT: torch.aten.matmul
// CHECK: return
// The kernel: 16 keys a tile (the cache padded to 32), 16 query rows a block, four rows a step;
// the batch, positions and keys its operands; each query row's 8 pairs kept as i32s.
// CHECK: stream.executable private @qmlir.prefill_attention.pairs.{{.*}}$executable
// CHECK: !stream.binding, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) {
// CHECK: memref<?x16xbf16>{%{{.*}}}
// CHECK: memref<?x8x?xbf16>{%{{.*}}, %{{.*}}}
// CHECK: memref.alloca() : memref<16x8xi32>
// CHECK: vector.bitcast %{{.*}} : vector<16xbf16> to vector<8xi32>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// CHECK-NOT: maximumf
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp %{{.*}} : f32
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK-COUNT-4: vector.fma %{{.*}} : vector<16xf32>
// CHECK: func.func private @qmlir.prefill_attention.pairs.1x2xDx16.1x2x24x16f32.fill1x1x1xDx24(
// CHECK: tensor.pad %{{.*}} high[0, %{{.*}}, 0]
// CHECK: linalg.generic {indexing_maps = [#[[PAIRS]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<2x?x16xf32>) outs(%{{.*}} : tensor<2x8x?x2xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x8x?x2xbf16> into tensor<2x8x?xbf16>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: flow.dispatch
// In AVX2 code: f32 FMAs over K transposed in f32, 8 keys a tile, 8 rows a block.
// AVX2: call @qmlir.prefill_attention.1x2xDx16.1x2x24x16f32.fill1x1x1xDx24(
// AVX2: memref<?x16x?xf32>{%{{.*}}, %{{.*}}}
// AVX2: memref.alloca() : memref<8x16xf32>
// AVX2: memref.alloca() : memref<8x8xf32>
// AVX2-COUNT-8: vector.fma %{{.*}} : vector<8xf32>
// AVX2: arith.constant 8 : index
// AVX2: linalg.transpose

module {
  func.func @main(%arg0: !torch.vtensor<[1,4,?,16],bf16>, %arg1: !torch.vtensor<[1,2,24,16],bf16>, %arg2: !torch.vtensor<[1,2,24,16],bf16>, %arg3: !torch.vtensor<[1,1,?,24],i1>) -> !torch.vtensor<[1,4,?,16],bf16> {
    %int2 = torch.constant.int 2
    %0 = torch.aten.size.int %arg0, %int2 : !torch.vtensor<[1,4,?,16],bf16>, !torch.int -> !torch.int
    %int6 = torch.constant.int 6
    %none = torch.constant.none
    %none_0 = torch.constant.none
    %none_1 = torch.constant.none
    %false = torch.constant.bool false
    %none_2 = torch.constant.none
    %1 = torch.aten._to_copy %arg0, %int6, %none, %none_0, %none_1, %false, %none_2 : !torch.vtensor<[1,4,?,16],bf16>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,4,?,16],f32>
    %int6_3 = torch.constant.int 6
    %none_4 = torch.constant.none
    %none_5 = torch.constant.none
    %none_6 = torch.constant.none
    %false_7 = torch.constant.bool false
    %none_8 = torch.constant.none
    %2 = torch.aten._to_copy %arg1, %int6_3, %none_4, %none_5, %none_6, %false_7, %none_8 : !torch.vtensor<[1,2,24,16],bf16>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,2,24,16],f32>
    %int6_9 = torch.constant.int 6
    %none_10 = torch.constant.none
    %none_11 = torch.constant.none
    %none_12 = torch.constant.none
    %false_13 = torch.constant.bool false
    %none_14 = torch.constant.none
    %3 = torch.aten._to_copy %arg2, %int6_9, %none_10, %none_11, %none_12, %false_13, %none_14 : !torch.vtensor<[1,2,24,16],bf16>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,2,24,16],f32>
    %int2_15 = torch.constant.int 2
    %4 = torch.aten.mul.int %int2_15, %0 : !torch.int, !torch.int -> !torch.int
    %int1 = torch.constant.int 1
    %int2_16 = torch.constant.int 2
    %int16 = torch.constant.int 16
    %5 = torch.prim.ListConstruct %int1, %int2_16, %4, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %6 = torch.aten.view %1, %5 : !torch.vtensor<[1,4,?,16],f32>, !torch.list<int> -> !torch.vtensor<[1,2,?,16],f32>
    %int-2 = torch.constant.int -2
    %int-1 = torch.constant.int -1
    %7 = torch.aten.transpose.int %2, %int-2, %int-1 : !torch.vtensor<[1,2,24,16],f32>, !torch.int, !torch.int -> !torch.vtensor<[1,2,16,24],f32>
    %8 = torch.aten.matmul %6, %7 : !torch.vtensor<[1,2,?,16],f32>, !torch.vtensor<[1,2,16,24],f32> -> !torch.vtensor<[1,2,?,24],f32>
    %float2.500000e-01 = torch.constant.float 2.500000e-01
    %9 = torch.aten.mul.Scalar %8, %float2.500000e-01 : !torch.vtensor<[1,2,?,24],f32>, !torch.float -> !torch.vtensor<[1,2,?,24],f32>
    %int1_17 = torch.constant.int 1
    %int2_18 = torch.constant.int 2
    %int2_19 = torch.constant.int 2
    %int24 = torch.constant.int 24
    %10 = torch.prim.ListConstruct %int1_17, %int2_18, %int2_19, %0, %int24 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %11 = torch.aten.view %9, %10 : !torch.vtensor<[1,2,?,24],f32>, !torch.list<int> -> !torch.vtensor<[1,2,2,?,24],f32>
    %int-3 = torch.constant.int -3
    %12 = torch.aten.unsqueeze %arg3, %int-3 : !torch.vtensor<[1,1,?,24],i1>, !torch.int -> !torch.vtensor<[1,1,1,?,24],i1>
    %13 = torch.aten.logical_not %12 : !torch.vtensor<[1,1,1,?,24],i1> -> !torch.vtensor<[1,1,1,?,24],i1>
    %float-Inf = torch.constant.float 0xFFF0000000000000
    %14 = torch.aten.masked_fill.Scalar %11, %13, %float-Inf : !torch.vtensor<[1,2,2,?,24],f32>, !torch.vtensor<[1,1,1,?,24],i1>, !torch.float -> !torch.vtensor<[1,2,2,?,24],f32>
    %int-1_20 = torch.constant.int -1
    %none_21 = torch.constant.none
    %15 = torch.aten.softmax.int %14, %int-1_20, %none_21 : !torch.vtensor<[1,2,2,?,24],f32>, !torch.int, !torch.none -> !torch.vtensor<[1,2,2,?,24],f32>
    %16 = torch.aten.logical_not %12 : !torch.vtensor<[1,1,1,?,24],i1> -> !torch.vtensor<[1,1,1,?,24],i1>
    %int-1_22 = torch.constant.int -1
    %true = torch.constant.bool true
    %17 = torch.aten.all.dim %16, %int-1_22, %true : !torch.vtensor<[1,1,1,?,24],i1>, !torch.int, !torch.bool -> !torch.vtensor<[1,1,1,?,1],i1>
    %float0.000000e00 = torch.constant.float 0.000000e+00
    %18 = torch.aten.masked_fill.Scalar %15, %17, %float0.000000e00 : !torch.vtensor<[1,2,2,?,24],f32>, !torch.vtensor<[1,1,1,?,1],i1>, !torch.float -> !torch.vtensor<[1,2,2,?,24],f32>
    %int1_23 = torch.constant.int 1
    %int2_24 = torch.constant.int 2
    %int24_25 = torch.constant.int 24
    %19 = torch.prim.ListConstruct %int1_23, %int2_24, %4, %int24_25 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %20 = torch.aten.view %18, %19 : !torch.vtensor<[1,2,2,?,24],f32>, !torch.list<int> -> !torch.vtensor<[1,2,?,24],f32>
    %21 = torch.aten.matmul %20, %3 : !torch.vtensor<[1,2,?,24],f32>, !torch.vtensor<[1,2,24,16],f32> -> !torch.vtensor<[1,2,?,16],f32>
    %int1_26 = torch.constant.int 1
    %int4 = torch.constant.int 4
    %int16_27 = torch.constant.int 16
    %22 = torch.prim.ListConstruct %int1_26, %int4, %0, %int16_27 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
    %23 = torch.aten.view %21, %22 : !torch.vtensor<[1,2,?,16],f32>, !torch.list<int> -> !torch.vtensor<[1,4,?,16],f32>
    %int15 = torch.constant.int 15
    %none_28 = torch.constant.none
    %none_29 = torch.constant.none
    %none_30 = torch.constant.none
    %false_31 = torch.constant.bool false
    %none_32 = torch.constant.none
    %24 = torch.aten._to_copy %23, %int15, %none_28, %none_29, %none_30, %false_31, %none_32 : !torch.vtensor<[1,4,?,16],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[1,4,?,16],bf16>
    return %24 : !torch.vtensor<[1,4,?,16],bf16>
  }
}
