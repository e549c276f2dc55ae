// A table only gathered, a tied one gathered and read whole by a matmul, a norm's weight
// (tests/unit/test_gathered_parameters.py).
func.func @main(%ids: !torch.vtensor<[1,4],si64>, %x: !torch.vtensor<[4,16],f32>)
    -> (!torch.vtensor<[1,4,16],f32>, !torch.vtensor<[1,4,16],f32>, !torch.vtensor<[4,64],f32>,
        !torch.vtensor<[4,16],f32>) {
  %false = torch.constant.bool false
  %neg1 = torch.constant.int -1
  %emb = torch.vtensor.literal(dense<0.0> : tensor<64x16xf32>) {qmlir.parameter = "embed"} : !torch.vtensor<[64,16],f32>
  %rows = torch.aten.embedding %emb, %ids, %neg1, %false, %false : !torch.vtensor<[64,16],f32>, !torch.vtensor<[1,4],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,4,16],f32>
  %tied = torch.vtensor.literal(dense<0.0> : tensor<64x16xf32>) {qmlir.parameter = "tied"} : !torch.vtensor<[64,16],f32>
  %tied_rows = torch.aten.embedding %tied, %ids, %neg1, %false, %false : !torch.vtensor<[64,16],f32>, !torch.vtensor<[1,4],si64>, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,4,16],f32>
  %tied_t = torch.aten.t %tied : !torch.vtensor<[64,16],f32> -> !torch.vtensor<[16,64],f32>
  %logits = torch.aten.mm %x, %tied_t : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16,64],f32> -> !torch.vtensor<[4,64],f32>
  %norm = torch.vtensor.literal(dense<1.0> : tensor<16xf32>) {qmlir.parameter = "norm"} : !torch.vtensor<[16],f32>
  %scaled = torch.aten.mul.Tensor %x, %norm : !torch.vtensor<[4,16],f32>, !torch.vtensor<[16],f32> -> !torch.vtensor<[4,16],f32>
  return %rows, %tied_rows, %logits, %scaled : !torch.vtensor<[1,4,16],f32>, !torch.vtensor<[1,4,16],f32>, !torch.vtensor<[4,64],f32>, !torch.vtensor<[4,16],f32>
}
