// snippet: reads ${source}:${type}; defines ${name}_at:index ${name}:index
  ${name}_at = arith.constant ${at} : index
  ${name} = tensor.dim ${source}, ${name}_at : ${type}
