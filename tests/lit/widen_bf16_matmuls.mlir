// RUN: %qmlir-opt -p widen-bf16-matmuls %s | FileCheck %s

// A bf16 linear: its input, weight and bias widened to f32 by their bits (one function per
// tensor type, a generic of scalar bitcasts: bf16 -> i16, zero-extended, << 16, -> f32), an f32
// linear, one rounding of its result to bf16.
// CHECK-LABEL: func.func @bf16_linear
// CHECK: %[[W:.*]] = torch.vtensor.literal
// CHECK: %[[B:.*]] = torch.vtensor.literal
// CHECK: %[[X:.*]] = torch_c.to_builtin_tensor %arg0
// CHECK: %[[XW:.*]] = call @qmlir.widen_bf16.Dx8(%[[X]]) : (tensor<?x8xbf16>) -> tensor<?x8xf32>
// CHECK: %[[XF:.*]] = torch_c.from_builtin_tensor %[[XW]]
// CHECK: %[[WB:.*]] = torch_c.to_builtin_tensor %[[W]]
// CHECK: %[[WW:.*]] = call @qmlir.widen_bf16.4x8(%[[WB]]) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[WF:.*]] = torch_c.from_builtin_tensor %[[WW]]
// CHECK: %[[BB:.*]] = torch_c.to_builtin_tensor %[[B]]
// CHECK: %[[BW:.*]] = call @qmlir.widen_bf16.4(%[[BB]])
// CHECK: %[[BF:.*]] = torch_c.from_builtin_tensor %[[BW]]
// CHECK: %[[Y:.*]] = torch.aten.linear %[[XF]], %[[WF]], %[[BF]] {qmlir.kept_high_precision = "recipe 'none'"} : !torch.vtensor<[?,8],f32>, !torch.vtensor<[4,8],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[?,4],f32>
// CHECK: %[[R:.*]] = torch.prims.convert_element_type %[[Y]], %{{.*}} -> !torch.vtensor<[?,4],bf16>
// CHECK: return %[[R]]
func.func @bf16_linear(%x: !torch.vtensor<[?,8],bf16>) -> !torch.vtensor<[?,4],bf16> {
  %w = torch.vtensor.literal(dense<1.0> : tensor<4x8xbf16>) : !torch.vtensor<[4,8],bf16>
  %b = torch.vtensor.literal(dense<0.5> : tensor<4xbf16>) : !torch.vtensor<[4],bf16>
  %y = torch.aten.linear %x, %w, %b {qmlir.kept_high_precision = "recipe 'none'"} : !torch.vtensor<[?,8],bf16>, !torch.vtensor<[4,8],bf16>, !torch.vtensor<[4],bf16> -> !torch.vtensor<[?,4],bf16>
  return %y : !torch.vtensor<[?,4],bf16>
}

// Two activations (attention's scores): both widened.
// CHECK-LABEL: func.func @bf16_bmm
// CHECK: %[[A:.*]] = call @qmlir.widen_bf16.2x3x8
// CHECK: %[[AF:.*]] = torch_c.from_builtin_tensor %[[A]]
// CHECK: %[[B:.*]] = call @qmlir.widen_bf16.2x8x5
// CHECK: %[[BF:.*]] = torch_c.from_builtin_tensor %[[B]]
// CHECK: %[[P:.*]] = torch.aten.bmm %[[AF]], %[[BF]] : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[2,8,5],f32> -> !torch.vtensor<[2,3,5],f32>
// CHECK: torch.prims.convert_element_type %[[P]], %{{.*}} -> !torch.vtensor<[2,3,5],bf16>
func.func @bf16_bmm(%a: !torch.vtensor<[2,3,8],bf16>, %b: !torch.vtensor<[2,8,5],bf16>) -> !torch.vtensor<[2,3,5],bf16> {
  %p = torch.aten.bmm %a, %b : !torch.vtensor<[2,3,8],bf16>, !torch.vtensor<[2,8,5],bf16> -> !torch.vtensor<[2,3,5],bf16>
  return %p : !torch.vtensor<[2,3,5],bf16>
}

// An f32 matmul of an operand converted from bf16 (`x.float() @ w`): that operand is widened from
// the bf16 tensor by its bits; the f32 one and the result stay as they are.
// CHECK-LABEL: func.func @converted_operand
// CHECK: %[[X:.*]] = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[3,8],bf16> -> tensor<3x8xbf16>
// CHECK: %[[XW:.*]] = call @qmlir.widen_bf16.3x8(%[[X]])
// CHECK: %[[XF:.*]] = torch_c.from_builtin_tensor %[[XW]]
// CHECK: %[[Y:.*]] = torch.aten.mm %[[XF]], %arg1 : !torch.vtensor<[3,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[3,4],f32>
// CHECK-NOT: convert_element_type %[[Y]]
// CHECK: return %[[Y]]
func.func @converted_operand(%x: !torch.vtensor<[3,8],bf16>, %w: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[3,4],f32> {
  %int6 = torch.constant.int 6
  %xf = torch.prims.convert_element_type %x, %int6 : !torch.vtensor<[3,8],bf16>, !torch.int -> !torch.vtensor<[3,8],f32>
  %y = torch.aten.mm %xf, %w : !torch.vtensor<[3,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[3,4],f32>
  return %y : !torch.vtensor<[3,4],f32>
}

// f32 and f16 matmuls are left as they are.
// CHECK-LABEL: func.func @others
// CHECK-NOT: call
// CHECK: torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,8],f32>
// CHECK: torch.aten.mm %arg2, %arg3 : !torch.vtensor<[3,8],f16>
// CHECK-NOT: call
// CHECK: return
func.func @others(%a: !torch.vtensor<[3,8],f32>, %b: !torch.vtensor<[8,4],f32>, %c: !torch.vtensor<[3,8],f16>, %d: !torch.vtensor<[8,4],f16>) -> (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f16>) {
  %p = torch.aten.mm %a, %b : !torch.vtensor<[3,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[3,4],f32>
  %q = torch.aten.mm %c, %d : !torch.vtensor<[3,8],f16>, !torch.vtensor<[8,4],f16> -> !torch.vtensor<[3,4],f16>
  return %p, %q : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f16>
}

// The widening functions, one per type; a dynamic dim sized from the operand.
// CHECK-LABEL: func.func private @qmlir.widen_bf16.Dx8(%arg0: tensor<?x8xbf16>) -> tensor<?x8xf32>
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.empty(%[[D]]) : tensor<?x8xf32>
// CHECK: ^bb0(%[[V:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = arith.bitcast %[[V]] : bf16 to i16
// CHECK-NEXT: %[[Z:.*]] = arith.extui %[[I]] : i16 to i32
// CHECK-NEXT: %[[C:.*]] = arith.constant 16 : i32
// CHECK-NEXT: %[[S:.*]] = arith.shli %[[Z]], %[[C]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.bitcast %[[S]] : i32 to f32
// CHECK-NEXT: linalg.yield %[[F]] : f32
// CHECK-LABEL: func.func private @qmlir.widen_bf16.4x8
// CHECK-NOT: tensor.dim
// CHECK-LABEL: func.func private @qmlir.widen_bf16.4(
// CHECK-LABEL: func.func private @qmlir.widen_bf16.2x3x8
// CHECK-LABEL: func.func private @qmlir.widen_bf16.2x8x5
// CHECK-LABEL: func.func private @qmlir.widen_bf16.3x8
