// RUN: %qmlir-opt -p unshare-scatter-inits %s | FileCheck %s

// Two scatters into zeros of one dynamic shape (IREE 3.13 would make the two fills one and
// write both scatters into it): each init becomes the fill plus -|sum(float(indices) * 0)|,
// computed from its own indices. The written values and the rest of the IR are unchanged.
// CHECK-LABEL: func.func @two_scatters_into_zeros
// CHECK: %[[Z1:.*]] = torch.aten.zeros_like %arg0
// CHECK: %[[F1:.*]] = torch.prims.convert_element_type %arg1
// CHECK: %[[M1:.*]] = torch.aten.mul.Scalar %[[F1]], %{{.*}} : !torch.vtensor<[?],f32>, !torch.float
// CHECK: %[[S1:.*]] = torch.aten.sum %[[M1]], %{{.*}} -> !torch.vtensor<[],f32>
// CHECK: %[[A1:.*]] = torch.aten.abs %[[S1]]
// CHECK: %[[N1:.*]] = torch.aten.neg %[[A1]]
// CHECK: %[[I1:.*]] = torch.aten.add.Tensor %[[Z1]], %[[N1]], %{{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK: torch.aten.index_put %[[I1]], %{{.*}}, %arg0
// CHECK: %[[Z2:.*]] = torch.aten.zeros_like %arg0
// CHECK: torch.prims.convert_element_type %arg2
// CHECK: %[[I2:.*]] = torch.aten.add.Tensor %[[Z2]]
// CHECK: torch.aten.index_put %[[I2]]
// CHECK: return
func.func @two_scatters_into_zeros(%x: !torch.vtensor<[?,8],f32>, %i1: !torch.vtensor<[?],si64>, %i2: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %z1 = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  %l1 = torch.prim.ListConstruct %i1 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index_put %z1, %l1, %x, %true : !torch.vtensor<[?,8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,8],f32>, !torch.bool -> !torch.vtensor<[?,8],f32>
  %z2 = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[?,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?,8],f32>
  %l2 = torch.prim.ListConstruct %i2 : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %b = torch.aten.index_put %z2, %l2, %x, %true : !torch.vtensor<[?,8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,8],f32>, !torch.bool -> !torch.vtensor<[?,8],f32>
  return %a, %b : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>
}

// An integer init gets the -0 converted to its dtype (0); a scatter's index operand is its
// third.
// CHECK-LABEL: func.func @integer_scatter
// CHECK: %[[Z:.*]] = torch.aten.zeros_like %arg1
// CHECK: torch.prims.convert_element_type %arg1
// CHECK: %[[N:.*]] = torch.aten.neg
// CHECK: %[[C:.*]] = torch.prims.convert_element_type %[[N]], %{{.*}} : !torch.vtensor<[],f32>, !torch.int -> !torch.vtensor<[],si64>
// CHECK: %[[I:.*]] = torch.aten.add.Tensor %[[Z]], %[[C]]
// CHECK: torch.aten.scatter.src %[[I]]
func.func @integer_scatter(%src: !torch.vtensor<[?],si64>, %idx: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],si64> {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %z = torch.aten.zeros_like %idx, %none, %none, %none, %false, %none : !torch.vtensor<[?],si64>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[?],si64>
  %r = torch.aten.scatter.src %z, %int0, %idx, %src : !torch.vtensor<[?],si64>, !torch.int, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64> -> !torch.vtensor<[?],si64>
  return %r : !torch.vtensor<[?],si64>
}

// Left as they are: a static shape (compiled right), and an init the model computes.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: torch.aten.neg
// CHECK: return
func.func @left_alone(%x: !torch.vtensor<[4,8],f32>, %y: !torch.vtensor<[?,8],f32>, %i: !torch.vtensor<[4],si64>, %j: !torch.vtensor<[?],si64>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[?,8],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %z = torch.aten.zeros_like %x, %none, %none, %none, %false, %none : !torch.vtensor<[4,8],f32>, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.none -> !torch.vtensor<[4,8],f32>
  %l = torch.prim.ListConstruct %i : (!torch.vtensor<[4],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index_put %z, %l, %x, %true : !torch.vtensor<[4,8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[4,8],f32>, !torch.bool -> !torch.vtensor<[4,8],f32>
  %w = torch.aten.add.Tensor %y, %y, %int1 : !torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>, !torch.int -> !torch.vtensor<[?,8],f32>
  %m = torch.prim.ListConstruct %j : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %b = torch.aten.index_put %w, %m, %y, %true : !torch.vtensor<[?,8],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,8],f32>, !torch.bool -> !torch.vtensor<[?,8],f32>
  return %a, %b : !torch.vtensor<[4,8],f32>, !torch.vtensor<[?,8],f32>
}
