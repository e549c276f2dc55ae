// RUN: %qmlir-opt -p widen-bf16-matmuls %s | FileCheck %s

// A bf16 linear: its input, weight and bias widened to f32 by their bits (bf16 -> si16 -> si32,
// << 16, -> f32), an f32 linear, one rounding of its result to bf16.
// CHECK-LABEL: func.func @bf16_linear
// CHECK: %[[W:.*]] = torch.vtensor.literal
// CHECK: %[[XI:.*]] = torch.aten.view.dtype %arg0, %{{.*}} : !torch.vtensor<[?,8],bf16>, !torch.int -> !torch.vtensor<[?,8],si16>
// CHECK: %[[XW:.*]] = torch.prims.convert_element_type %[[XI]], %{{.*}} -> !torch.vtensor<[?,8],si32>
// CHECK: %[[XS:.*]] = torch.aten.__lshift__.Scalar %[[XW]], %{{.*}} -> !torch.vtensor<[?,8],si32>
// CHECK: %[[XF:.*]] = torch.aten.view.dtype %[[XS]], %{{.*}} -> !torch.vtensor<[?,8],f32>
// CHECK: %[[WI:.*]] = torch.aten.view.dtype %[[W]], %{{.*}} -> !torch.vtensor<[4,8],si16>
// CHECK: %[[WF:.*]] = torch.aten.view.dtype %{{.*}}, %{{.*}} -> !torch.vtensor<[4,8],f32>
// CHECK: %[[BF:.*]] = torch.aten.view.dtype %{{.*}}, %{{.*}} -> !torch.vtensor<[4],f32>
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
// CHECK: %[[A:.*]] = torch.aten.view.dtype %{{.*}}, %{{.*}} -> !torch.vtensor<[2,3,8],f32>
// CHECK: %[[B:.*]] = torch.aten.view.dtype %{{.*}}, %{{.*}} -> !torch.vtensor<[2,8,5],f32>
// CHECK: %[[P:.*]] = torch.aten.bmm %[[A]], %[[B]] : !torch.vtensor<[2,3,8],f32>, !torch.vtensor<[2,8,5],f32> -> !torch.vtensor<[2,3,5],f32>
// CHECK: torch.prims.convert_element_type %[[P]], %{{.*}} -> !torch.vtensor<[2,3,5],bf16>
func.func @bf16_bmm(%a: !torch.vtensor<[2,3,8],bf16>, %b: !torch.vtensor<[2,8,5],bf16>) -> !torch.vtensor<[2,3,5],bf16> {
  %p = torch.aten.bmm %a, %b : !torch.vtensor<[2,3,8],bf16>, !torch.vtensor<[2,8,5],bf16> -> !torch.vtensor<[2,3,5],bf16>
  return %p : !torch.vtensor<[2,3,5],bf16>
}

// An f32 matmul of an operand converted from bf16 (`x.float() @ w`): that operand is widened from
// the bf16 tensor by its bits; the f32 one and the result stay as they are.
// CHECK-LABEL: func.func @converted_operand
// CHECK: %[[XI:.*]] = torch.aten.view.dtype %arg0, %{{.*}} : !torch.vtensor<[3,8],bf16>, !torch.int -> !torch.vtensor<[3,8],si16>
// CHECK: %[[XF:.*]] = torch.aten.view.dtype %{{.*}}, %{{.*}} -> !torch.vtensor<[3,8],f32>
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
// CHECK-NOT: view.dtype
// CHECK: torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,8],f32>
// CHECK: torch.aten.mm %arg2, %arg3 : !torch.vtensor<[3,8],f16>
// CHECK-NOT: view.dtype
// CHECK: return
func.func @others(%a: !torch.vtensor<[3,8],f32>, %b: !torch.vtensor<[8,4],f32>, %c: !torch.vtensor<[3,8],f16>, %d: !torch.vtensor<[8,4],f16>) -> (!torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f16>) {
  %p = torch.aten.mm %a, %b : !torch.vtensor<[3,8],f32>, !torch.vtensor<[8,4],f32> -> !torch.vtensor<[3,4],f32>
  %q = torch.aten.mm %c, %d : !torch.vtensor<[3,8],f16>, !torch.vtensor<[8,4],f16> -> !torch.vtensor<[3,4],f16>
  return %p, %q : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f16>
}
