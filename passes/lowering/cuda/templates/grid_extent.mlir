      %grid_${axis} = affine.apply affine_map<()[s0] -> (s0 ceildiv ${per})>()[${workload}]
