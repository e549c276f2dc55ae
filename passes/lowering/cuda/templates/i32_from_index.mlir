arith.index_cast ${value} : index to i32
