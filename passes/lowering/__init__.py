"""Each named op's body for a target: ``cpu/`` (llvm-cpu), ``cuda/`` (the hand-written kernels,
else the cpu body), neither importing the other; what both take is here: ``definitions.py``
(templates filled into a definition), ``dims.py`` (dynamic dims) and ``templates/``.
``declarations.py`` puts the bodies into a module."""
