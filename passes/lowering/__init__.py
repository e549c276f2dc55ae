"""Each named op's body for a target: ``cpu/`` (llvm-cpu), ``cuda/`` (the hand-written kernels,
else the cpu body); ``declarations.py`` puts them into a module."""
