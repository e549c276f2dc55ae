// RUN: %qmlir-opt -p check-indices %s | FileCheck %s

// Positions the model computes (RoBERTa's cumsum of the non-padding tokens, here an add) get a
// bounds check before the embedding reads its 8-row table: min >= 0 and max < 8, asserted
// with a message naming the layer; the embedding reads them clamped to 0..7 (IREE may run it
// before the assert fails the call). The ids the function takes are not checked here (the
// runtime checks an embedding's input ids before the call).
// CHECK-LABEL: func.func @computed_positions
// CHECK: %[[P:.*]] = torch.aten.add.Tensor %arg0
// CHECK: %[[ROWS:.*]] = torch.constant.int 8
// CHECK: %[[ZERO:.*]] = torch.constant.int 0
// CHECK: %[[MAX:.*]] = torch.aten.max %[[P]] : !torch.vtensor<[2,4],si64> -> !torch.vtensor<[],si64>
// CHECK: %[[HI:.*]] = torch.aten.item %[[MAX]]
// CHECK: %[[BELOW:.*]] = torch.aten.lt.int %[[HI]], %[[ROWS]]
// CHECK: %[[MIN:.*]] = torch.aten.min %[[P]]
// CHECK: %[[LO:.*]] = torch.aten.item %[[MIN]]
// CHECK: %[[ABOVE:.*]] = torch.aten.ge.int %[[LO]], %[[ZERO]]
// CHECK: %[[OK:.*]] = torch.aten.__and__.bool %[[BELOW]], %[[ABOVE]]
// CHECK: torch.runtime.assert %[[OK]], "qmlir index check: emb.positions: an index into its embedding (dim 0) is outside 0..7: this input
// CHECK-NEXT: %[[LAST:.*]] = torch.constant.int 7
// CHECK-NEXT: %[[SAFE:.*]] = torch.aten.clamp %[[P]], %[[ZERO]], %[[LAST]]
// CHECK-NEXT: torch.aten.embedding %{{.*}}, %[[SAFE]]
// CHECK-NOT: torch.runtime.assert
// CHECK: torch.aten.embedding %{{.*}}, %arg0
// CHECK: return
func.func @computed_positions(%ids: !torch.vtensor<[2,4],si64>) -> (!torch.vtensor<[2,4,3],f32>, !torch.vtensor<[2,4,3],f32>) {
  %table = torch.vtensor.literal(dense<1.0> : tensor<8x3xf32>) : !torch.vtensor<[8,3],f32>
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %false = torch.constant.bool false
  %intm1 = torch.constant.int -1
  %pos = torch.aten.add.Tensor %ids, %ids, %int1 : !torch.vtensor<[2,4],si64>, !torch.vtensor<[2,4],si64>, !torch.int -> !torch.vtensor<[2,4],si64> loc("emb.positions")
  %e = torch.aten.embedding %table, %pos, %intm1, %false, %false : !torch.vtensor<[8,3],f32>, !torch.vtensor<[2,4],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,4,3],f32> loc("emb.positions")
  %f = torch.aten.embedding %table, %ids, %intm1, %false, %false : !torch.vtensor<[8,3],f32>, !torch.vtensor<[2,4],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[2,4,3],f32> loc("emb.tokens")
  return %e, %f : !torch.vtensor<[2,4,3],f32>, !torch.vtensor<[2,4,3],f32>
}

// Constant indices within the table (BERT's token types, a position buffer's slice) need no
// check; one past it keeps the check.
// CHECK-LABEL: func.func @constant_indices
// CHECK-COUNT-1: torch.runtime.assert
// CHECK-NOT: torch.runtime.assert
// CHECK: return
func.func @constant_indices() -> (!torch.vtensor<[1,3,3],f32>, !torch.vtensor<[1,3,3],f32>) {
  %table = torch.vtensor.literal(dense<1.0> : tensor<4x3xf32>) : !torch.vtensor<[4,3],f32>
  %inside = torch.vtensor.literal(dense<[[0, 1, 3, 2]]> : tensor<1x4xsi64>) : !torch.vtensor<[1,4],si64>
  %past = torch.vtensor.literal(dense<[[0, 4, 1]]> : tensor<1x3xsi64>) : !torch.vtensor<[1,3],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %slice = torch.aten.slice.Tensor %inside, %int1, %int0, %int3, %int1 : !torch.vtensor<[1,4],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,3],si64>
  %false = torch.constant.bool false
  %intm1 = torch.constant.int -1
  %a = torch.aten.embedding %table, %slice, %intm1, %false, %false : !torch.vtensor<[4,3],f32>, !torch.vtensor<[1,3],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3,3],f32>
  %b = torch.aten.embedding %table, %past, %intm1, %false, %false : !torch.vtensor<[4,3],f32>, !torch.vtensor<[1,3],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3,3],f32>
  return %a, %b : !torch.vtensor<[1,3,3],f32>, !torch.vtensor<[1,3,3],f32>
}

// index.Tensor wraps negative indices (x[idx] as torch does): the bound is -n..n-1. An
// index_select of a dynamic dim reads the table's size at the call; the same indices on the
// same table are checked once, and an input index_select takes is checked too (the runtime's
// input check covers embeddings only).
// CHECK-LABEL: func.func @wrapping_and_dynamic
// CHECK: %[[N:.*]] = torch.constant.int 5
// CHECK: %[[NEG:.*]] = torch.aten.neg.int %[[N]]
// CHECK: torch.aten.ge.int %{{.*}}, %[[NEG]]
// CHECK: torch.runtime.assert {{.*}}"qmlir index check: pick: an index into its index.Tensor (dim 0) is outside -5..4: this input
// CHECK: %[[WRAPPED:.*]] = torch.aten.clamp %arg0, %[[NEG]]
// CHECK: %[[LIST:.*]] = torch.prim.ListConstruct %[[WRAPPED]]
// CHECK: torch.aten.index.Tensor %{{.*}}, %[[LIST]]
// CHECK: %[[D:.*]] = torch.constant.int 0
// CHECK: %[[SIZE:.*]] = torch.aten.size.int %arg1, %[[D]]
// CHECK: torch.aten.lt.int %{{.*}}, %[[SIZE]]
// CHECK: torch.runtime.assert {{.*}}outside 0..n-1:
// CHECK: %[[HIGH:.*]] = torch.aten.sub.int %[[SIZE]]
// CHECK: %[[IN:.*]] = torch.aten.clamp %arg0, %{{.*}}, %[[HIGH]]
// CHECK-NEXT: torch.aten.index_select %arg1, %{{.*}}, %[[IN]]
// CHECK-NOT: torch.runtime.assert
// CHECK: torch.aten.index_select %arg1, %{{.*}}, %[[IN]]
// CHECK: return
func.func @wrapping_and_dynamic(%idx: !torch.vtensor<[3],si64>, %t: !torch.vtensor<[?,2],f32>) -> (!torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>) {
  %table = torch.vtensor.literal(dense<1.0> : tensor<5x2xf32>) : !torch.vtensor<[5,2],f32>
  %list = torch.prim.ListConstruct %idx : (!torch.vtensor<[3],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index.Tensor %table, %list : !torch.vtensor<[5,2],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[3,2],f32> loc("pick")
  %int0 = torch.constant.int 0
  %b = torch.aten.index_select %t, %int0, %idx : !torch.vtensor<[?,2],f32>, !torch.int, !torch.vtensor<[3],si64> -> !torch.vtensor<[3,2],f32>
  %c = torch.aten.index_select %t, %int0, %idx : !torch.vtensor<[?,2],f32>, !torch.int, !torch.vtensor<[3],si64> -> !torch.vtensor<[3,2],f32>
  return %a, %b, %c : !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>, !torch.vtensor<[3,2],f32>
}

// A boolean mask (x[mask] = v: index_put with an i1 index) selects by position, not by value:
// no check, no clamp.
// CHECK-LABEL: func.func @boolean_mask
// CHECK-NOT: torch.runtime.assert
// CHECK-NOT: torch.aten.clamp
// CHECK: torch.aten.index_put %arg0
func.func @boolean_mask(%x: !torch.vtensor<[4,3],f32>, %mask: !torch.vtensor<[4,3],i1>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[4,3],f32> {
  %list = torch.prim.ListConstruct %mask : (!torch.vtensor<[4,3],i1>) -> !torch.list<optional<vtensor>>
  %false = torch.constant.bool false
  %0 = torch.aten.index_put %x, %list, %v, %false : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  return %0 : !torch.vtensor<[4,3],f32>
}

// Values known at compile time need no check: an arange of constant bounds plus a constant,
// through views (transformers' masks), and a gather from a constant (BERT's token types: a
// zeros buffer gathered at positions) into a 2-row table. An arange past the table is checked.
// CHECK-LABEL: func.func @known_ranges
// CHECK-COUNT-1: torch.runtime.assert {{.*}}outside -4..3:
// CHECK-NOT: torch.runtime.assert
// CHECK: return
func.func @known_ranges(%t: !torch.vtensor<[4,3],f32>, %types: !torch.vtensor<[2,3],f32>) -> (!torch.vtensor<[1,3,3],f32>, !torch.vtensor<[1,3,3],f32>, !torch.vtensor<[5,3],f32>) {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %cpu = torch.constant.device "cpu"
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int5 = torch.constant.int 5
  %r = torch.aten.arange %int3, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[3],si64>
  %shifted = torch.aten.add.Scalar %r, %int1, %int1 : !torch.vtensor<[3],si64>, !torch.int, !torch.int -> !torch.vtensor<[3],si64>
  %u = torch.aten.unsqueeze %shifted, %int0 : !torch.vtensor<[3],si64>, !torch.int -> !torch.vtensor<[1,3],si64>
  %l1 = torch.prim.ListConstruct %u : (!torch.vtensor<[1,3],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index.Tensor %t, %l1 : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[1,3,3],f32>
  %zeros = torch.vtensor.literal(dense<0> : tensor<1x8xsi64>) : !torch.vtensor<[1,8],si64>
  %pos = torch.vtensor.literal(dense<[[0, 1, 2]]> : tensor<1x3xsi64>) : !torch.vtensor<[1,3],si64>
  %tt = torch.aten.gather %zeros, %int1, %pos, %false : !torch.vtensor<[1,8],si64>, !torch.int, !torch.vtensor<[1,3],si64>, !torch.bool -> !torch.vtensor<[1,3],si64>
  %intm1 = torch.constant.int -1
  %b = torch.aten.embedding %types, %tt, %intm1, %false, %false : !torch.vtensor<[2,3],f32>, !torch.vtensor<[1,3],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,3,3],f32>
  %past = torch.aten.arange %int5, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[5],si64>
  %l2 = torch.prim.ListConstruct %past : (!torch.vtensor<[5],si64>) -> !torch.list<optional<vtensor>>
  %c = torch.aten.index.Tensor %t, %l2 : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>> -> !torch.vtensor<[5,3],f32>
  return %a, %b, %c : !torch.vtensor<[1,3,3],f32>, !torch.vtensor<[1,3,3],f32>, !torch.vtensor<[5,3],f32>
}

// A remainder by a positive constant lies in 0..n-1: a generator's cache positions (start +
// arange, modulo the cache's length) need no check (on cuda a check is a wait for the device in
// the middle of the call). A remainder by a size the table does not hold is checked.
// CHECK-LABEL: func.func @cache_positions
// CHECK-NOT: outside -8..7
// CHECK-COUNT-1: torch.runtime.assert {{.*}}outside -4..3:
// CHECK-NOT: torch.runtime.assert
// CHECK: return
func.func @cache_positions(%pos: !torch.vtensor<[?],si64>, %cache: !torch.vtensor<[8,3],f32>, %small: !torch.vtensor<[4,3],f32>, %new: !torch.vtensor<[?,3],f32>) -> (!torch.vtensor<[8,3],f32>, !torch.vtensor<[4,3],f32>) {
  %false = torch.constant.bool false
  %int8 = torch.constant.int 8
  %wrapped = torch.aten.remainder.Scalar %pos, %int8 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %l1 = torch.prim.ListConstruct %wrapped : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index_put %cache, %l1, %new, %false : !torch.vtensor<[8,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,3],f32>, !torch.bool -> !torch.vtensor<[8,3],f32>
  %l2 = torch.prim.ListConstruct %wrapped : (!torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %b = torch.aten.index_put %small, %l2, %new, %false : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[?,3],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  return %a, %b : !torch.vtensor<[8,3],f32>, !torch.vtensor<[4,3],f32>
}
