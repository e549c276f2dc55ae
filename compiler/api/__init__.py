"""The Python API behind ``compiler.compile``, ``compile_training``, ``report`` and the
block-scale ops (``compiler/__init__.py`` imports them lazily; ``compiler.quantize`` is
``pipeline/quantize.py``, a compile of one operand's quantize core)."""
