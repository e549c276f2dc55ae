      %grid_${axis}_tiles = affine.max affine_map<()[s0] -> (s0 ceildiv ${per}, 1)>()[${workload}]
      %grid_${axis} = affine.min affine_map<()[s0] -> (s0, ${cap})>()[%grid_${axis}_tiles]
