"""The llvm-cpu lowering of every named op: ``lower.lower_cpu``; one module per op family."""
