// RUN: %qmlir-opt -p lower-named-ops %s | FileCheck %s

// The quantize core's streaming passes carry their own llvm-cpu tiling (passes/lowering/cpu/tiling.py):
// 64 KB of input per workgroup, written on the collapsed one-row-per-block iteration space that
// IREE keeps (a 3-D [rows, blocks, 16] op would be reshaped and lose the attribute).
// CHECK-DAG: #[[RED16:.*]] = #iree_cpu.lowering_config<distribution = [1024, 0], vector_common_parallel = [8, 0], vector_reduction = [0, 16]>
// CHECK-DAG: #[[RED128:.*]] = #iree_cpu.lowering_config<distribution = [128, 0], vector_common_parallel = [8, 0], vector_reduction = [0, 16]>
// CHECK-DAG: #[[RED4:.*]] = #iree_cpu.lowering_config<distribution = [4, 0], vector_common_parallel = [8, 0], vector_reduction = [0, 16]>
// CHECK-DAG: #[[ENC16:.*]] = #iree_cpu.lowering_config<distribution = [1024, 16], vector_common_parallel = [1, 16]>
// CHECK-DAG: #[[PIPE:.*]] = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
// CHECK-DAG: #[[C_RED16:.*]] = #iree_codegen.compilation_info<lowering_config = #[[RED16]], translation_info = #[[PIPE]]>
// CHECK-DAG: #[[C_RED128:.*]] = #iree_codegen.compilation_info<lowering_config = #[[RED128]], translation_info = #[[PIPE]]>
// CHECK-DAG: #[[C_RED4:.*]] = #iree_codegen.compilation_info<lowering_config = #[[RED4]], translation_info = #[[PIPE]]>
// CHECK-DAG: #[[C_ENC16:.*]] = #iree_codegen.compilation_info<lowering_config = #[[ENC16]], translation_info = #[[PIPE]]>

// 1x16 blocks: 4096 blocks of 64 B, reduced 1024 to a workgroup.
// CHECK-LABEL: func.func private @qmlir.amax.block1x16.64x1024(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4096, 16] : tensor<65536xf32> into tensor<4096x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : tensor<4096x16xf32>)
// CHECK-SAME: attrs = {compilation_info = #[[C_RED16]]}

// 1x128 blocks: 128 of them (512 B each) to a workgroup.
// CHECK-LABEL: func.func private @qmlir.amax.block1x128.64x1024(
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<512x128xf32>)
// CHECK-SAME: attrs = {compilation_info = #[[C_RED128]]}

// nvfp4's encode pass (TE order): the block values tabulated once for the 256 scale codes, then
// one block per row, 1024 blocks to a workgroup, each block's values looked up by its code, i4
// codes.
// CHECK-LABEL: func.func private @qmlir.quantize.e2m1.block1x16.e4m3.te.64x1024(
// CHECK: %[[TABLE:.*]]:3 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<256xf32>, tensor<256xf32>, tensor<256xi32>)
// CHECK: %[[ROWS:.*]] = iree_tensor_ext.compute_barrier.start %{{.*}} : tensor<4096xi8> -> tensor<4096xi8>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[ROWS]] : tensor<4096x16xf32>, tensor<4096xi8>)
// CHECK-SAME: outs(%{{.*}} : tensor<4096x16xi4>)
// CHECK-SAME: attrs = {compilation_info = #[[C_ENC16]]}
// CHECK: tensor.extract %[[TABLE]]#0
// CHECK: tensor.extract %[[TABLE]]#1
// CHECK: tensor.extract %[[TABLE]]#2
// CHECK: iree_tensor_ext.bitcast %{{.*}} : tensor<64x1024xi4> -> tensor<64x512xi8>

// A small tensor: the workgroup is capped at its 4 blocks.
// CHECK-LABEL: func.func private @qmlir.amax.block1x16.2x32(
// CHECK: linalg.generic
// CHECK-SAME: attrs = {compilation_info = #[[C_RED4]]}
module {
  func.func private @qmlir.amax.block1x16.64x1024(tensor<64x1024xf32>) -> tensor<64x64xf32> attributes {qmlir.block = array<i64: 1, 16>, qmlir.op = "amax"}
  func.func private @qmlir.amax.block1x128.64x1024(tensor<64x1024xf32>) -> tensor<64x8xf32> attributes {qmlir.block = array<i64: 1, 128>, qmlir.op = "amax"}
  func.func private @qmlir.quantize.e2m1.block1x16.e4m3.te.64x1024(tensor<64x1024xf32>, tensor<64x64xi8>, tensor<f32>) -> (tensor<64x512xi8>, tensor<64x64xi8>) attributes {qmlir.block = array<i64: 1, 16>, qmlir.format = "e2m1", qmlir.op = "quantize", qmlir.order = "te", qmlir.packed = true, qmlir.scale_format = "e4m3", qmlir.scaling = "block"}
  func.func private @qmlir.amax.block1x16.2x32(tensor<2x32xf32>) -> tensor<2x2xf32> attributes {qmlir.block = array<i64: 1, 16>, qmlir.op = "amax"}
}
