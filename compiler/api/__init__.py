"""The Python API behind ``compiler.compile``, ``compiler.quantize`` and the block-scale ops
(``compiler/__init__.py`` imports them lazily)."""
