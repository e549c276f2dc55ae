#loc = loc(unknown)
module {
  func.func @main(%arg0: !torch.vtensor<[32,64],f32> loc(unknown), %arg1: !torch.vtensor<[32],f32> loc(unknown), %arg2: !torch.vtensor<[16,32],f32> loc(unknown), %arg3: !torch.vtensor<[32,64],f32> loc(unknown), %arg4: !torch.vtensor<[32,16],f32> loc(unknown)) -> (!torch.vtensor<[],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>) {
    %0 = torch.aten.t %arg0 : !torch.vtensor<[32,64],f32> -> !torch.vtensor<[64,32],f32> loc(#loc1)
    %int1 = torch.constant.int 1 loc(#loc1)
    %int1_0 = torch.constant.int 1 loc(#loc1)
    %1 = torch.aten.addmm %arg1, %arg3, %0, %int1, %int1_0 : !torch.vtensor<[32],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[64,32],f32>, !torch.int, !torch.int -> !torch.vtensor<[32,32],f32> loc(#loc1)
    %2 = torch.aten.relu %1 : !torch.vtensor<[32,32],f32> -> !torch.vtensor<[32,32],f32>
    %3 = torch.aten.t %arg2 : !torch.vtensor<[16,32],f32> -> !torch.vtensor<[32,16],f32> loc(#loc2)
    %4 = torch.aten.mm %2, %3 : !torch.vtensor<[32,32],f32>, !torch.vtensor<[32,16],f32> -> !torch.vtensor<[32,16],f32> loc(#loc2)
    %int1_1 = torch.constant.int 1
    %5 = torch.aten.sub.Tensor %4, %arg4, %int1_1 : !torch.vtensor<[32,16],f32>, !torch.vtensor<[32,16],f32>, !torch.int -> !torch.vtensor<[32,16],f32>
    %int2 = torch.constant.int 2
    %6 = torch.aten.pow.Tensor_Scalar %5, %int2 : !torch.vtensor<[32,16],f32>, !torch.int -> !torch.vtensor<[32,16],f32>
    %none = torch.constant.none
    %7 = torch.aten.mean %6, %none : !torch.vtensor<[32,16],f32>, !torch.none -> !torch.vtensor<[],f32>
    %int1_2 = torch.constant.int 1
    %none_3 = torch.constant.none
    %none_4 = torch.constant.none
    %none_5 = torch.constant.none
    %false = torch.constant.bool false
    %int1_6 = torch.constant.int 1
    %8 = torch.aten.full_like %7, %int1_2, %none_3, %none_4, %none_5, %false, %int1_6 : !torch.vtensor<[],f32>, !torch.int, !torch.none, !torch.none, !torch.none, !torch.bool, !torch.int -> !torch.vtensor<[],f32>
    %int1_7 = torch.constant.int 1
    %9 = torch.aten.sub.Tensor %4, %arg4, %int1_7 : !torch.vtensor<[32,16],f32>, !torch.vtensor<[32,16],f32>, !torch.int -> !torch.vtensor<[32,16],f32>
    %float3.906250e-03 = torch.constant.float 3.906250e-03
    %10 = torch.aten.mul.Scalar %9, %float3.906250e-03 : !torch.vtensor<[32,16],f32>, !torch.float -> !torch.vtensor<[32,16],f32>
    %11 = torch.aten.mul.Tensor %10, %8 : !torch.vtensor<[32,16],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[32,16],f32>
    %12 = torch.aten.t %11 : !torch.vtensor<[32,16],f32> -> !torch.vtensor<[16,32],f32>
    %13 = torch.aten.mm %12, %2 : !torch.vtensor<[16,32],f32>, !torch.vtensor<[32,32],f32> -> !torch.vtensor<[16,32],f32>
    %14 = torch.aten.mm %11, %arg2 : !torch.vtensor<[32,16],f32>, !torch.vtensor<[16,32],f32> -> !torch.vtensor<[32,32],f32>
    %int0 = torch.constant.int 0
    %15 = torch.aten.le.Scalar %2, %int0 : !torch.vtensor<[32,32],f32>, !torch.int -> !torch.vtensor<[32,32],i1>
    %int0_8 = torch.constant.int 0
    %int6 = torch.constant.int 6
    %int0_9 = torch.constant.int 0
    %cpu = torch.constant.device "cpu"
    %none_10 = torch.constant.none
    %16 = torch.aten.scalar_tensor %int0_8, %int6, %int0_9, %cpu, %none_10 : !torch.int, !torch.int, !torch.int, !torch.Device, !torch.none -> !torch.vtensor<[],f32>
    %17 = torch.aten.where.self %15, %16, %14 : !torch.vtensor<[32,32],i1>, !torch.vtensor<[],f32>, !torch.vtensor<[32,32],f32> -> !torch.vtensor<[32,32],f32>
    %18 = torch.aten.t %17 : !torch.vtensor<[32,32],f32> -> !torch.vtensor<[32,32],f32>
    %19 = torch.aten.mm %18, %arg3 : !torch.vtensor<[32,32],f32>, !torch.vtensor<[32,64],f32> -> !torch.vtensor<[32,64],f32>
    %int0_11 = torch.constant.int 0
    %20 = torch.prim.ListConstruct %int0_11 : (!torch.int) -> !torch.list<int>
    %true = torch.constant.bool true
    %none_12 = torch.constant.none
    %21 = torch.aten.sum.dim_IntList %17, %20, %true, %none_12 : !torch.vtensor<[32,32],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,32],f32>
    %int32 = torch.constant.int 32
    %22 = torch.prim.ListConstruct %int32 : (!torch.int) -> !torch.list<int>
    %23 = torch.aten.view %21, %22 : !torch.vtensor<[1,32],f32>, !torch.list<int> -> !torch.vtensor<[32],f32>
    return %7, %19, %23, %13 : !torch.vtensor<[],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>
  }
  func.func @qmlir.apply_update(%arg0: !torch.vtensor<[32,64],f32> loc(unknown), %arg1: !torch.vtensor<[32],f32> loc(unknown), %arg2: !torch.vtensor<[16,32],f32> loc(unknown), %arg3: !torch.vtensor<[32,64],f32> loc(unknown), %arg4: !torch.vtensor<[32],f32> loc(unknown), %arg5: !torch.vtensor<[16,32],f32> loc(unknown), %arg6: !torch.vtensor<[32,64],f32> loc(unknown), %arg7: !torch.vtensor<[32],f32> loc(unknown), %arg8: !torch.vtensor<[16,32],f32> loc(unknown)) -> (!torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>) {
    %float9.000000e-01 = torch.constant.float 9.000000e-01
    %0 = torch.aten.mul.Scalar %arg6, %float9.000000e-01 : !torch.vtensor<[32,64],f32>, !torch.float -> !torch.vtensor<[32,64],f32>
    %int1 = torch.constant.int 1
    %1 = torch.aten.add.Tensor %0, %arg3, %int1 : !torch.vtensor<[32,64],f32>, !torch.vtensor<[32,64],f32>, !torch.int -> !torch.vtensor<[32,64],f32>
    %float5.000000e-01 = torch.constant.float 5.000000e-01
    %2 = torch.aten.mul.Scalar %1, %float5.000000e-01 : !torch.vtensor<[32,64],f32>, !torch.float -> !torch.vtensor<[32,64],f32>
    %int1_0 = torch.constant.int 1
    %3 = torch.aten.sub.Tensor %arg0, %2, %int1_0 : !torch.vtensor<[32,64],f32>, !torch.vtensor<[32,64],f32>, !torch.int -> !torch.vtensor<[32,64],f32>
    %float9.000000e-01_1 = torch.constant.float 9.000000e-01
    %4 = torch.aten.mul.Scalar %arg7, %float9.000000e-01_1 : !torch.vtensor<[32],f32>, !torch.float -> !torch.vtensor<[32],f32>
    %int1_2 = torch.constant.int 1
    %5 = torch.aten.add.Tensor %4, %arg4, %int1_2 : !torch.vtensor<[32],f32>, !torch.vtensor<[32],f32>, !torch.int -> !torch.vtensor<[32],f32>
    %float5.000000e-01_3 = torch.constant.float 5.000000e-01
    %6 = torch.aten.mul.Scalar %5, %float5.000000e-01_3 : !torch.vtensor<[32],f32>, !torch.float -> !torch.vtensor<[32],f32>
    %int1_4 = torch.constant.int 1
    %7 = torch.aten.sub.Tensor %arg1, %6, %int1_4 : !torch.vtensor<[32],f32>, !torch.vtensor<[32],f32>, !torch.int -> !torch.vtensor<[32],f32>
    %float9.000000e-01_5 = torch.constant.float 9.000000e-01
    %8 = torch.aten.mul.Scalar %arg8, %float9.000000e-01_5 : !torch.vtensor<[16,32],f32>, !torch.float -> !torch.vtensor<[16,32],f32>
    %int1_6 = torch.constant.int 1
    %9 = torch.aten.add.Tensor %8, %arg5, %int1_6 : !torch.vtensor<[16,32],f32>, !torch.vtensor<[16,32],f32>, !torch.int -> !torch.vtensor<[16,32],f32>
    %float5.000000e-01_7 = torch.constant.float 5.000000e-01
    %10 = torch.aten.mul.Scalar %9, %float5.000000e-01_7 : !torch.vtensor<[16,32],f32>, !torch.float -> !torch.vtensor<[16,32],f32>
    %int1_8 = torch.constant.int 1
    %11 = torch.aten.sub.Tensor %arg2, %10, %int1_8 : !torch.vtensor<[16,32],f32>, !torch.vtensor<[16,32],f32>, !torch.int -> !torch.vtensor<[16,32],f32>
    return %3, %7, %11, %1, %5, %9 : !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>, !torch.vtensor<[32,64],f32>, !torch.vtensor<[32],f32>, !torch.vtensor<[16,32],f32>
  }
}
#loc1 = loc("l1")
#loc2 = loc("l2")

