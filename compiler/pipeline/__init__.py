"""The pipeline: the compile, one stage per line (``inference``, ``training``), and what
configures it (the CPU compiled for, the layer globs a user names)."""
