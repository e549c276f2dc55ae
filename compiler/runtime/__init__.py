"""Stage 6, execute: load a sealed artifact and run it. Needs only ``iree-base-runtime``, numpy
and ml_dtypes: nothing here imports torch or ``iree.compiler``.

``module`` (``CompiledModule``, ``load``), ``seal`` (the artifact file and its digest),
``metadata_schema`` (the metadata's fields, checked), ``input_check`` (inputs against the
signature), ``scaling_health`` (is an fp8-delayed state sound).
"""

from compiler.runtime.module import (
    CompiledModule,
    load,
    open_module,
    read_artifact,
    to_numpy,
    to_torch,
)

__all__ = ["CompiledModule", "load", "open_module", "read_artifact", "to_numpy", "to_torch"]
