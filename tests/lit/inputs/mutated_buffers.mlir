// A model that writes two tokens' keys into a cache and counts its calls, as importer.py's
// lift_mutated_buffers leaves it: the buffers (cache, then count) are the first arguments, their
// new values (count, then cache: the order the program mutates them) the first results.
module {
  func.func @main(%arg0: !torch.vtensor<[1,8,4],f32>, %arg1: !torch.vtensor<[],si64>, %arg2: !torch.vtensor<[1,2,4],f32>, %arg3: !torch.vtensor<[2],si64>) -> (!torch.vtensor<[],si64>, !torch.vtensor<[1,8,4],f32>, !torch.vtensor<[1,2,4],f32>) {
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %none = torch.constant.none
    %0 = torch.aten.add.Scalar %arg1, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %1 = torch.prim.ListConstruct %none, %arg3 : (!torch.none, !torch.vtensor<[2],si64>) -> !torch.list<optional<vtensor>>
    %2 = torch.aten.index_put %arg0, %1, %arg2, %false : !torch.vtensor<[1,8,4],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[1,2,4],f32>, !torch.bool -> !torch.vtensor<[1,8,4],f32>
    %3 = torch.aten.mul.Tensor %arg2, %arg2 : !torch.vtensor<[1,2,4],f32>, !torch.vtensor<[1,2,4],f32> -> !torch.vtensor<[1,2,4],f32>
    return %0, %2, %3 : !torch.vtensor<[],si64>, !torch.vtensor<[1,8,4],f32>, !torch.vtensor<[1,2,4],f32>
  }
}
