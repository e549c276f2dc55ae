// RUN: %qmlir-opt -p lower-named-ops %s > %t.mlir
// RUN: iree-compile %t.mlir --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
// RUN:   --iree-llvmcpu-target-triple=x86_64-unknown-linux-gnu --iree-input-demote-f64-to-f32=false \
// RUN:   --compile-to=executable-configurations | FileCheck %s
// RUN: iree-compile %t.mlir --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
// RUN:   --iree-llvmcpu-target-triple=x86_64-unknown-linux-gnu --iree-input-demote-f64-to-f32=false \
// RUN:   --compile-to=vm 2>/dev/null | FileCheck %s --check-prefix=HOST

// IREE drops a compilation_info when it rewrites the op it sits on (a reshape folded into the
// op's operands does that), silently falling back to its own tiling; here the configured
// dispatches show that the streaming passes keep theirs (passes/lowering/cpu/tiling.py).
// CHECK-DAG: lowering_config = #iree_cpu.lowering_config<distribution = [1024, 0], vector_common_parallel = [8, 0], vector_reduction = [0, 16]>
// CHECK-DAG: lowering_config = #iree_cpu.lowering_config<distribution = [1024, 16], vector_common_parallel = [1, 16]>

// What keeps the attribute must not split the call: one submission, one host wait (a wait in the
// middle is a host round trip and a worker wake-up between dispatches, measured at up to 4 ms).
// HOST-LABEL: vm.func private @core(
// HOST: vm.call.variadic @hal.device.queue.execute.indirect(
// HOST-NOT: @hal.device.queue.execute
// HOST: vm.call.variadic.yieldable @hal.fence.await(
// HOST-NOT: @hal.device.queue.execute
// HOST-NOT: @hal.fence.await
// HOST-LABEL: vm.func private @__init(
module {
  func.func private @qmlir.amax.block1x16.64x1024(tensor<64x1024xf32>) -> tensor<64x64xf32> attributes {qmlir.block = array<i64: 1, 16>, qmlir.op = "amax"}
  func.func private @qmlir.quantize.e2m1.block1x16.e4m3.te.64x1024(tensor<64x1024xf32>, tensor<64x64xi8>, tensor<f32>) -> (tensor<64x512xi8>, tensor<64x64xi8>) attributes {qmlir.block = array<i64: 1, 16>, qmlir.format = "e2m1", qmlir.op = "quantize", qmlir.order = "te", qmlir.packed = true, qmlir.scale_format = "e4m3", qmlir.scaling = "block"}
  // the scale codes come from a dispatch of their own, as in a compiled model
  func.func @core(%x: tensor<64x1024xf32>, %d_in: tensor<64x64xi8>, %g: tensor<f32>) -> (tensor<64x64xf32>, tensor<64x512xi8>) {
    %a = call @qmlir.amax.block1x16.64x1024(%x) : (tensor<64x1024xf32>) -> tensor<64x64xf32>
    %empty = tensor.empty() : tensor<64x64xi8>
    %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d_in : tensor<64x64xi8>) outs(%empty : tensor<64x64xi8>) {
    ^bb0(%v: i8, %o: i8):
      %sq = arith.muli %v, %v : i8
      linalg.yield %sq : i8
    } -> tensor<64x64xi8>
    %q:2 = call @qmlir.quantize.e2m1.block1x16.e4m3.te.64x1024(%x, %d, %g) : (tensor<64x1024xf32>, tensor<64x64xi8>, tensor<f32>) -> (tensor<64x512xi8>, tensor<64x64xi8>)
    return %a, %q#0 : tensor<64x64xf32>, tensor<64x512xi8>
  }
}
