// RUN: %qmlir-opt -p separate-rotate-half %s | FileCheck %s
// RUN: %qmlir-opt -p separate-rotate-half %s | %iree-compile-cpu --compile-to=flow - | FileCheck %s --check-prefix=FLOW
// RUN: %iree-compile-cpu --compile-to=flow %s | FileCheck %s --check-prefix=FUSED

// A rotary embedding's rotate_half (transformers' `cat((-x2, x1), dim=-1)`) reaches its users
// through a compute barrier; a dynamic dim reaches the barrier as its size.
// CHECK-LABEL: func.func @rope
// CHECK: %[[CAT:.*]] = torch.aten.cat
// CHECK-NEXT: %[[B:.*]] = torch_c.to_builtin_tensor %[[CAT]] : !torch.vtensor<[?,4,64],f32> -> tensor<?x4x64xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x4x64xf32>
// CHECK-NEXT: %[[S:.*]] = iree_tensor_ext.compute_barrier.start %[[B]] : tensor<?x4x64xf32>{%[[D]]} -> tensor<?x4x64xf32>
// CHECK-NEXT: %[[T:.*]] = torch_c.from_builtin_tensor %[[S]] : tensor<?x4x64xf32> -> !torch.vtensor<[?,4,64],f32>
// CHECK: torch.aten.mul.Tensor %[[T]], %arg2
// Apart, the rotation's consumer reads it as an operand: no gather left in it.
// FLOW-LABEL: func.func @rope$async_dispatch_1_elementwise
// FLOW-NOT: tensor.extract
// FLOW: return
// Without the pass, IREE fuses the concatenation into its consumer as a gather.
// FUSED-LABEL: func.func @rope$async_dispatch_0_elementwise
// FUSED: tensor.extract
func.func @rope(%x: !torch.vtensor<[?,4,64],f32>, %cos: !torch.vtensor<[?,4,64],f32>, %sin: !torch.vtensor<[?,4,64],f32>) -> !torch.vtensor<[?,4,64],f32> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int32 = torch.constant.int 32
  %end = torch.constant.int 9223372036854775807
  %x1 = torch.aten.slice.Tensor %x, %int-1, %int0, %int32, %int1 : !torch.vtensor<[?,4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,4,32],f32>
  %x2 = torch.aten.slice.Tensor %x, %int-1, %int32, %end, %int1 : !torch.vtensor<[?,4,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,4,32],f32>
  %neg = torch.aten.neg %x2 : !torch.vtensor<[?,4,32],f32> -> !torch.vtensor<[?,4,32],f32>
  %list = torch.prim.ListConstruct %neg, %x1 : (!torch.vtensor<[?,4,32],f32>, !torch.vtensor<[?,4,32],f32>) -> !torch.list<vtensor>
  %rot = torch.aten.cat %list, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,4,64],f32>
  %a = torch.aten.mul.Tensor %x, %cos : !torch.vtensor<[?,4,64],f32>, !torch.vtensor<[?,4,64],f32> -> !torch.vtensor<[?,4,64],f32>
  %b = torch.aten.mul.Tensor %rot, %sin : !torch.vtensor<[?,4,64],f32>, !torch.vtensor<[?,4,64],f32> -> !torch.vtensor<[?,4,64],f32>
  %y = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[?,4,64],f32>, !torch.vtensor<[?,4,64],f32>, !torch.int -> !torch.vtensor<[?,4,64],f32>
  return %y : !torch.vtensor<[?,4,64],f32>
}

// Not a rotation: a concatenation of two different tensors, or of two slices none negated.
// CHECK-LABEL: func.func @other_concats
// CHECK-NOT: compute_barrier
// CHECK: return
func.func @other_concats(%x: !torch.vtensor<[8,64],f32>, %y: !torch.vtensor<[8,32],f32>) -> (!torch.vtensor<[8,64],f32>, !torch.vtensor<[8,64],f32>) {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int32 = torch.constant.int 32
  %int64 = torch.constant.int 64
  %x1 = torch.aten.slice.Tensor %x, %int-1, %int0, %int32, %int1 : !torch.vtensor<[8,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[8,32],f32>
  %x2 = torch.aten.slice.Tensor %x, %int-1, %int32, %int64, %int1 : !torch.vtensor<[8,64],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[8,32],f32>
  %neg = torch.aten.neg %x2 : !torch.vtensor<[8,32],f32> -> !torch.vtensor<[8,32],f32>
  %l1 = torch.prim.ListConstruct %neg, %y : (!torch.vtensor<[8,32],f32>, !torch.vtensor<[8,32],f32>) -> !torch.list<vtensor>
  %c1 = torch.aten.cat %l1, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,64],f32>
  %l2 = torch.prim.ListConstruct %x2, %x1 : (!torch.vtensor<[8,32],f32>, !torch.vtensor<[8,32],f32>) -> !torch.list<vtensor>
  %c2 = torch.aten.cat %l2, %int-1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[8,64],f32>
  return %c1, %c2 : !torch.vtensor<[8,64],f32>, !torch.vtensor<[8,64],f32>
}
