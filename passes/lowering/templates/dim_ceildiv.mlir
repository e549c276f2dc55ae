// snippet: reads ${value}:index; defines ${name}_align:index ${name}_n:index
  ${name}_align = arith.constant ${align} : index
  ${name}_n = arith.ceildivui ${value}, ${name}_align : index
