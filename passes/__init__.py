"""qmlir's passes over IREE's MLIR bindings, one module per pass (file name = pass name):

``fold_weight_views``, ``quantize_matmuls`` (the recipe pass), ``expose_scaling_state``,
``gemm_operands`` (llvm-cpu), ``fold_constant_quantize``, ``fuse_quantize_core`` (cuda) and
``lower_named_ops``. Below them, each layer importing only the ones under it: ``recipes/``
(what each scaling recipe emits), ``lowering/`` (each named op's body per target: ``cpu/``,
``cuda/``), ``host/`` (running lowered ops on this CPU, IREE's flags), ``ir/`` (types, torch
ops, the named ops and their typed attributes, element formats) and ``base/`` (errors, option
parsing, atomic writes, the names an artifact and the runtime share).

This package imports nothing on its own: ``passes.base`` and ``passes.host.call`` are what the
runtime needs, and they load neither torch nor ``iree.compiler``. ``python -m passes`` runs
passes on an MLIR file (the lit tests' driver).
"""
