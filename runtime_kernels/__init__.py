"""Hand-written CUDA kernels for the quantize core and block-scaled GEMM (the ``cuda`` target).

The ``cuda`` target is not part of this version: ``--target cuda`` is refused with a clear
message. Kernels, their NVRTC build and dispatch glue will live in this package.
"""
