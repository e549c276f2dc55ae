// RUN: %qmlir-opt -p slice-cache-writes %s | FileCheck %s
// RUN: %qmlir-opt -p slice-cache-writes %s | %iree-compile-cpu --compile-to=flow - | FileCheck %s --check-prefix=FLOW
// RUN: %iree-compile-cpu --compile-to=flow %s | FileCheck %s --check-prefix=SCATTER
// RUN: %qmlir-opt -p 'slice-cache-writes{function=cases}' %s | FileCheck %s --check-prefix=CASES

// A cache layer's write at positions start .. start+n-1 (cached_decoder.py's index_copy_, modulo
// the cache's 64 positions) becomes a slice_scatter at start clamped to [0, 64 - n].
// CHECK-LABEL: func.func @main
// CHECK-NOT: torch.aten.remainder
// CHECK: %[[DIM:.*]] = torch.constant.int 2
// CHECK-NEXT: %[[N:.*]] = torch.aten.size.int %arg1, %[[DIM]] : !torch.vtensor<[1,2,?,16],bf16>, !torch.int -> !torch.int
// CHECK-NEXT: %[[LEN:.*]] = torch.constant.int 64
// CHECK-NEXT: %[[LAST:.*]] = torch.aten.sub.int %[[LEN]], %[[N]]
// CHECK-NEXT: %[[S0:.*]] = torch.aten.Int.Tensor %arg2 : !torch.vtensor<[],si64> -> !torch.int
// CHECK-NEXT: %[[ZERO:.*]] = torch.constant.int 0
// CHECK-NEXT: %[[S1:.*]] = torch.prim.max.int %[[S0]], %[[ZERO]]
// CHECK-NEXT: %[[S:.*]] = torch.prim.min.int %[[S1]], %[[LAST]]
// CHECK-NEXT: %[[END:.*]] = torch.aten.add.int %[[S]], %[[N]]
// CHECK-NEXT: %[[ONE:.*]] = torch.constant.int 1
// CHECK-NEXT: %[[NEW:.*]] = torch.aten.slice_scatter %arg0, %arg1, %[[DIM]], %[[S]], %[[END]], %[[ONE]]
// CHECK-NOT: torch.aten.index_put
// CHECK-NEXT: return %[[NEW]]
// IREE copies the values into the cache: no scatter.
// FLOW-LABEL: util.func public @main
// FLOW-NOT: scatter
// FLOW: util.return
// Without the pass, a scatter whose indices hold every element's coordinates.
// SCATTER-LABEL: util.func public @main
// SCATTER: scatter
// SCATTER: util.return
func.func @main(%cache: !torch.vtensor<[1,2,64,16],bf16>, %values: !torch.vtensor<[1,2,?,16],bf16>, %start: !torch.vtensor<[],si64>) -> !torch.vtensor<[1,2,64,16],bf16> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int64 = torch.constant.int 64
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %n = torch.aten.size.int %values, %int2 : !torch.vtensor<[1,2,?,16],bf16>, !torch.int -> !torch.int
  %range = torch.aten.arange %n, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  %shifted = torch.aten.add.Tensor %range, %start, %int1 : !torch.vtensor<[?],si64>, !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %positions = torch.aten.remainder.Scalar %shifted, %int64 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %indices = torch.prim.ListConstruct %none, %none, %positions : (!torch.none, !torch.none, !torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %new = torch.aten.index_put %cache, %indices, %values, %false : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,?,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  return %new : !torch.vtensor<[1,2,64,16],bf16>
}

// A function other than @main is left alone (a generator's decode step keeps its scatter).
// CHECK-LABEL: func.func @decode
// CHECK: torch.aten.index_put
// CHECK-NOT: torch.aten.slice_scatter
// CHECK: return
func.func @decode(%cache: !torch.vtensor<[1,2,64,16],bf16>, %values: !torch.vtensor<[1,2,1,16],bf16>, %start: !torch.vtensor<[],si64>) -> !torch.vtensor<[1,2,64,16],bf16> {
  %int1 = torch.constant.int 1
  %int64 = torch.constant.int 64
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %range = torch.aten.arange %int1, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[1],si64>
  %shifted = torch.aten.add.Tensor %range, %start, %int1 : !torch.vtensor<[1],si64>, !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[1],si64>
  %positions = torch.aten.remainder.Scalar %shifted, %int64 : !torch.vtensor<[1],si64>, !torch.int -> !torch.vtensor<[1],si64>
  %indices = torch.prim.ListConstruct %none, %none, %positions : (!torch.none, !torch.none, !torch.vtensor<[1],si64>) -> !torch.list<optional<vtensor>>
  %new = torch.aten.index_put %cache, %indices, %values, %false : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,1,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  return %new : !torch.vtensor<[1,2,64,16],bf16>
}

// Left alone (the pass run on this function): a remainder by another length than the cache's,
// positions not from an arange, accumulation, one position's values broadcast over n positions.
// CASES-LABEL: func.func @cases
// CASES-COUNT-4: torch.aten.index_put
// CASES-NOT: torch.aten.slice_scatter
// CASES: return
func.func @cases(%cache: !torch.vtensor<[1,2,64,16],bf16>, %values: !torch.vtensor<[1,2,?,16],bf16>, %start: !torch.vtensor<[],si64>, %given: !torch.vtensor<[?],si64>, %one: !torch.vtensor<[1,2,1,16],bf16>) -> !torch.vtensor<[1,2,64,16],bf16> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int64 = torch.constant.int 64
  %none = torch.constant.none
  %cpu = torch.constant.device "cpu"
  %false = torch.constant.bool false
  %n = torch.aten.size.int %values, %int2 : !torch.vtensor<[1,2,?,16],bf16>, !torch.int -> !torch.int
  %range = torch.aten.arange %n, %none, %none, %cpu, %false : !torch.int, !torch.none, !torch.none, !torch.Device, !torch.bool -> !torch.vtensor<[?],si64>
  %shifted = torch.aten.add.Tensor %range, %start, %int1 : !torch.vtensor<[?],si64>, !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %positions = torch.aten.remainder.Scalar %shifted, %int64 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %int32 = torch.constant.int 32
  %true = torch.constant.bool true
  %wrapped = torch.aten.remainder.Scalar %shifted, %int32 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?],si64>
  %i1 = torch.prim.ListConstruct %none, %none, %wrapped : (!torch.none, !torch.none, !torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %a = torch.aten.index_put %cache, %i1, %values, %false : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,?,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  %i2 = torch.prim.ListConstruct %none, %none, %given : (!torch.none, !torch.none, !torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %b = torch.aten.index_put %a, %i2, %values, %false : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,?,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  %i3 = torch.prim.ListConstruct %none, %none, %positions : (!torch.none, !torch.none, !torch.vtensor<[?],si64>) -> !torch.list<optional<vtensor>>
  %c = torch.aten.index_put %b, %i3, %values, %true : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,?,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  %d = torch.aten.index_put %c, %i3, %one, %false : !torch.vtensor<[1,2,64,16],bf16>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,1,16],bf16>, !torch.bool -> !torch.vtensor<[1,2,64,16],bf16>
  return %d : !torch.vtensor<[1,2,64,16],bf16>
}
