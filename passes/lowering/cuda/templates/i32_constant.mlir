arith.constant ${value} : i32
