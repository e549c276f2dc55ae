  // runtime_kernels ${family}.cu: ${kernel}, grid (${grid_x}, ${grid_y}), ${block} threads.
  // The PTX is the object's data; its path is a label only (IREE 3.13 prints an object without
  // a path as `{, data = ...}`, which does not parse back: bytecode round-trips would fail).
  ${results} = hal.dispatch.extern "${kernel}"${workload}(${operands}) : (${operand_types}) -> ${result_types}
    count(%device: !hal.device${workload_args}) -> (index, index, index) {
${count}      %grid_z = arith.constant 1 : index
      hal.return %grid_x, %grid_y, %grid_z : index, index, index
    }
    layout(#hal.pipeline.layout<constants = ${constants}, bindings = [${bindings}]>)
    objects({${target} ordinal(0) = [#hal.executable.object<{path = "${family}.${arch}.ptx", data = ${ptx}}>]})
    <workgroup_size = [${block} : index, 1 : index, 1 : index]>
