"""The pipeline: the compile, one stage per line (``inference``, ``training``, both calling
``core`` for the stages after the import, each pass through ``pass_runner``), what configures it
(``options``; ``target``: the target resolved once, with the CPU probe of ``cpu_target``; the
layer globs a user names) and what the artifact records of it (``describe``)."""
