// snippet: reads ${value}:index; defines ${name}_mul:index ${name}_raw:index
  ${name}_mul = arith.constant ${mul} : index
  ${name}_raw = arith.muli ${value}, ${name}_mul : index
