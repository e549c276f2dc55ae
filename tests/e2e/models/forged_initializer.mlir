// A module anyone can build with plain iree-compile: its initializer fails when it runs (a
// stand-in for one that loops or worse). `qmlir inspect` must never run it.
util.global private mutable @g : i32
util.initializer {
  %c = arith.constant 5 : i32
  util.status.check_ok %c, "the forged initializer ran"
  util.global.store %c, @g : i32
  util.return
}
func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> attributes {iree.reflection = {qmlir.metadata = "{}"}} {
  %g = util.global.load @g : i32
  %s = tensor.splat %g : tensor<4xi32>
  %y = arith.addi %x, %s : tensor<4xi32>
  return %y : tensor<4xi32>
}
