"""Artifact metadata: what a ``.vmfb`` was compiled from.

The runtime reads the sealed copy after the module (``compiler/runtime/seal.py``), verified with
the rest; ``iree.reflection = {qmlir.metadata = "<json>"}`` on ``@main`` also carries it into the
IREE module, for IREE's own tools (``iree-dump-module``).
"""

from __future__ import annotations

import json
from typing import Any

from iree.compiler import ir

from compiler.runtime.metadata import ArtifactMetadata
from passes.base.abi import ENTRY, METADATA_KEY
from passes.ir.types import DYNAMIC, tensor_info


def io_signature(module: ir.Module) -> dict[str, list[dict[str, Any]]]:
    """Inputs and outputs of ``@main`` as ``[{"shape": [32, None], "dtype": "f32"}, ...]``
    (``None``: a dynamic dim, described by ``compiler/frontend/input_roles.py``)."""
    main = entry_function(module)
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)

    def describe(types: list[ir.Type]) -> list[dict[str, Any]]:
        return [_tensor_spec(t) for t in types]

    return {"inputs": describe(list(ftype.inputs)), "outputs": describe(list(ftype.results))}


def _tensor_spec(t: ir.Type) -> dict[str, Any]:
    info = tensor_info(t, dynamic=True)
    if info is None:
        raise ValueError(f"@main has an argument or result of type {t}, not a tensor")
    return {"shape": [None if d == DYNAMIC else d for d in info.shape], "dtype": info.dtype}


def public_functions(module: ir.Module) -> list[str]:
    """The functions the ``.vmfb`` exports (``@main`` first), read at compile time so that
    ``qmlir inspect`` lists them without loading the module."""
    names = []
    for op in module.body.operations:
        attrs = op.operation.attributes
        if op.operation.name != "func.func" or "sym_name" not in attrs:
            continue
        private = (
            "sym_visibility" in attrs and ir.StringAttr(attrs["sym_visibility"]).value != "public"
        )
        if not private and len(op.operation.regions[0].blocks) > 0:
            names.append(ir.StringAttr(attrs["sym_name"]).value)
    return sorted(names, key=lambda n: (n != ENTRY, n))


def entry_function(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and "sym_name" in op.operation.attributes:
            if ir.StringAttr(op.operation.attributes["sym_name"]).value == ENTRY:
                return op.operation
    raise ValueError("module has no @main")


def embed_metadata(module: ir.Module, metadata: ArtifactMetadata) -> None:
    main = entry_function(module)
    text = json.dumps(metadata.to_json(), sort_keys=True)
    with module.context:
        main.attributes["iree.reflection"] = ir.DictAttr.get(
            {METADATA_KEY: ir.StringAttr.get(text)}
        )
