// snippet: reads ${value}:index; defines ${name}_factor:index ${name}:index
  ${name}_factor = arith.constant ${factor} : index
  ${name} = arith.muli ${value}, ${name}_factor : index
