// RUN: %qmlir-opt -p add-decode-step %s | FileCheck %s

// A split's pieces, unpacked from its list (Phi-3's fused gate_up, split in two halves; a
// split_with_sizes of 3 + 5): torch-mlir's refinement leaves them as they were, so
// add-decode-step gives them their sizes and refines again: every shape after them is static
// in @decode too (the one-row GEMMs decode-gemv takes).

// CHECK: func.func @decode(%{{.*}}: !torch.vtensor<[1,1,8],f32>) -> (!torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,1],f32>) {
// CHECK-NOT: ?
// CHECK: torch.aten.split.Tensor %{{.*}} : !torch.vtensor<[1,1,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
// CHECK-NEXT: %[[P:.*]]:2 = torch.prim.ListUnpack %{{.*}} : !torch.list<vtensor> -> !torch.vtensor<[1,1,4],f32>, !torch.vtensor<[1,1,4],f32>
// CHECK-NOT: ?
// CHECK: %[[M:.*]] = torch.aten.mul.Tensor %[[P]]#0, %[[P]]#1 : {{.*}} -> !torch.vtensor<[1,1,4],f32>
// CHECK-NEXT: torch.tensor_static_info_cast %[[M]] : !torch.vtensor<[1,1,4],f32> to !torch.vtensor<[1,?,4],f32>
// CHECK-NOT: ?
// CHECK: %[[Q:.*]]:2 = torch.prim.ListUnpack %{{.*}} : !torch.list<vtensor> -> !torch.vtensor<[1,1,3],f32>, !torch.vtensor<[1,1,5],f32>
// CHECK-NOT: ?
// CHECK: %[[S:.*]] = torch.aten.sum.dim_IntList %[[Q]]#1, {{.*}} -> !torch.vtensor<[1,1,1],f32>
// CHECK-NEXT: torch.tensor_static_info_cast %[[S]] : !torch.vtensor<[1,1,1],f32> to !torch.vtensor<[1,?,1],f32>

func.func @main(%arg0: !torch.vtensor<[1,?,8],f32>) -> (!torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,1],f32>) {
  %int4 = torch.constant.int 4
  %int-1 = torch.constant.int -1
  %0 = torch.aten.split.Tensor %arg0, %int4, %int-1 : !torch.vtensor<[1,?,8],f32>, !torch.int, !torch.int -> !torch.list<vtensor>
  %1:2 = torch.prim.ListUnpack %0 : !torch.list<vtensor> -> !torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,4],f32>
  %2 = torch.aten.mul.Tensor %1#0, %1#1 : !torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,4],f32> -> !torch.vtensor<[1,?,4],f32>
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %sizes = torch.prim.ListConstruct %int3, %int5 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.split_with_sizes %arg0, %sizes, %int-1 : !torch.vtensor<[1,?,8],f32>, !torch.list<int>, !torch.int -> !torch.list<vtensor>
  %4:2 = torch.prim.ListUnpack %3 : !torch.list<vtensor> -> !torch.vtensor<[1,?,3],f32>, !torch.vtensor<[1,?,5],f32>
  %dims = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
  %true = torch.constant.bool true
  %none = torch.constant.none
  %5 = torch.aten.sum.dim_IntList %4#1, %dims, %true, %none : !torch.vtensor<[1,?,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,?,1],f32>
  return %2, %5 : !torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,1],f32>
}
