module {
  util.global private mutable @other = dense<2.0> : tensor<f32>
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    %s = util.global.load @other : tensor<f32>
    return %s : tensor<f32>
  }
}
