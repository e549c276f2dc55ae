"""The cuda lowering: ``lower.lower_cuda`` gives a named op a body that calls a hand-written
kernel of ``runtime_kernels/`` (``kernels.py`` embeds its PTX), or None where the llvm-cpu
body serves; ``targets.py`` holds the device targets."""
