      %grid_${axis} = arith.constant ${count} : index
