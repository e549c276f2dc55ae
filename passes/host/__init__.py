"""Running compiled code on this machine: IREE's compile flags per target (``flags.py``), the
named ops' llvm-cpu lowering compiled and called from Python (``evaluate.py``), and the calling
thread's setup for a call into IREE (``call.py``, which the runtime uses too)."""
