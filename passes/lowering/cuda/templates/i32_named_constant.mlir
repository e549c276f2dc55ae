  %${key} = arith.constant ${value} : i32
