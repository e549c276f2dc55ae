// RUN: %qmlir-opt -p assume-multiples %s | FileCheck %s

// A size computed as a multiple of a constant (a dynamic key length rounded up to a multiple of 8,
// compiler/frontend/attention.py) is told to IREE as one: every use of the product reads it
// through util.assume.int, whose divisibility IREE carries into the dispatches that take the
// size. A product of two sizes (no constant) and a product by 1 carry nothing.
// CHECK-LABEL: func.func @padded
// CHECK: %[[UP:.*]] = torch.aten.floordiv.int
// CHECK: %[[P:.*]] = torch.aten.mul.int %[[UP]], %int8 :
// CHECK-NEXT: %[[W:.*]] = torch_c.to_i64 %[[P]]
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[W]] : i64 to index
// CHECK-NEXT: %[[A:.*]] = util.assume.int %[[I]]<udiv = 8> : index
// CHECK-NEXT: %[[B:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK-NEXT: %[[T:.*]] = torch_c.from_i64 %[[B]]
// CHECK: torch.aten.sub.int %[[T]], %[[S:[0-9a-z_]+]] :
// CHECK: torch.prim.ListConstruct %[[T]], %int16 :
// CHECK: %[[N:.*]] = torch.aten.mul.int %[[S]], %[[S]] :
// CHECK-NOT: util.assume.int
// CHECK: torch.aten.mul.int %[[N]], %{{.*}} :
// CHECK-NOT: util.assume.int
// CHECK: return
func.func @padded(%x: !torch.vtensor<[?,16],f32>) -> (!torch.vtensor<[?,16],f32>, !torch.int, !torch.int) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %int8 = torch.constant.int 8
  %int16 = torch.constant.int 16
  %s = torch.aten.size.int %x, %int0 : !torch.vtensor<[?,16],f32>, !torch.int -> !torch.int
  %sum = torch.aten.add.int %s, %int7 : !torch.int, !torch.int -> !torch.int
  %up = torch.aten.floordiv.int %sum, %int8 : !torch.int, !torch.int -> !torch.int
  %p = torch.aten.mul.int %up, %int8 : !torch.int, !torch.int -> !torch.int
  %pad = torch.aten.sub.int %p, %s : !torch.int, !torch.int -> !torch.int
  %shape = torch.prim.ListConstruct %p, %int16 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.view %x, %shape : !torch.vtensor<[?,16],f32>, !torch.list<int> -> !torch.vtensor<[?,16],f32>
  %n = torch.aten.mul.int %s, %s : !torch.int, !torch.int -> !torch.int
  %one = torch.aten.mul.int %n, %int1 : !torch.int, !torch.int -> !torch.int
  return %y, %pad, %one : !torch.vtensor<[?,16],f32>, !torch.int, !torch.int
}
