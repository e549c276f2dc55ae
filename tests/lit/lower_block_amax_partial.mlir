// RUN: %qmlir-opt -p lower-named-ops %s | FileCheck %s

// A rowwise block amax whose last block is partial (K = 688: five 1x128 blocks and 48 columns)
// reduces the full blocks and the tail from slices of x, with no tensor.pad: a padded copy of x
// (to 768 columns) was materialized by IREE as strided copies of the whole activation (the
// decoder sample's down projection under fp8-block: 86.7 -> 59.6 ms a call, its dynamic artifact,
// the same bits; benchmarks/RESULTS.md, 2026-11-30 twenty-ninth session).
// CHECK-LABEL: func.func private @qmlir.amax.block1x128.Dx688(
// CHECK-NOT: tensor.pad
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 640] [1, 1] : tensor<?x688xf32> to tensor<?x640xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 5, 128] : tensor<?x640xf32> into tensor<?x5x128xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 640] [%{{.*}}, 48] [1, 1] : tensor<?x688xf32> to tensor<?x48xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<?x5x128xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<?x1x48xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 5] [1, 1] : tensor<?x5xi32> into tensor<?x6xi32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 5] [%{{.*}}, 1] [1, 1] : tensor<?x1xi32> into tensor<?x6xi32>
// CHECK: return

// Static rows take the same form; mxfp8's 1x32 blocks too (70 = two blocks and 6 columns).
// CHECK-LABEL: func.func private @qmlir.amax.block1x32.5x70(
// CHECK-NOT: tensor.pad
// CHECK: tensor.extract_slice %{{.*}}[0, 64] [5, 6] [1, 1] : tensor<5x70xf32> to tensor<5x6xf32>
// CHECK: return

// A row shorter than one block keeps the padded form (one block: nothing to copy apart).
// CHECK-LABEL: func.func private @qmlir.amax.block1x128.3x70(
// CHECK: tensor.pad %{{.*}} low[0, 0] high[0, 58]
// CHECK: return

module {
  func.func private @qmlir.amax.block1x128.Dx688(tensor<?x688xf32>) -> tensor<?x6xf32> attributes {qmlir.block = array<i64: 1, 128>, qmlir.op = "amax"}
  func.func private @qmlir.amax.block1x32.5x70(tensor<5x70xf32>) -> tensor<5x3xf32> attributes {qmlir.block = array<i64: 1, 32>, qmlir.op = "amax"}
  func.func private @qmlir.amax.block1x128.3x70(tensor<3x70xf32>) -> tensor<3x1xf32> attributes {qmlir.block = array<i64: 1, 128>, qmlir.op = "amax"}
  func.func @main(%x: tensor<?x688xf32>, %y: tensor<5x70xf32>, %z: tensor<3x70xf32>) -> (tensor<?x6xf32>, tensor<5x3xf32>, tensor<3x1xf32>) {
    %a = call @qmlir.amax.block1x128.Dx688(%x) : (tensor<?x688xf32>) -> tensor<?x6xf32>
    %b = call @qmlir.amax.block1x32.5x70(%y) : (tensor<5x70xf32>) -> tensor<5x3xf32>
    %c = call @qmlir.amax.block1x128.3x70(%z) : (tensor<3x70xf32>) -> tensor<3x1xf32>
    return %a, %b, %c : tensor<?x6xf32>, tensor<5x3xf32>, tensor<3x1xf32>
  }
}
