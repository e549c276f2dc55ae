      %grid_${axis}_rows = arith.constant ${rows} : index
      %grid_${axis}_few = arith.cmpi ule, ${workload}, %grid_${axis}_rows : index
      %grid_${axis}_if_few = arith.constant ${few} : index
      %grid_${axis}_if_many = arith.constant ${many} : index
      %grid_${axis} = arith.select %grid_${axis}_few, %grid_${axis}_if_few, %grid_${axis}_if_many : index
