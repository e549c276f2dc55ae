"""The layer an op belongs to: its module path (``layers.3.fc1``)."""

from __future__ import annotations

from iree.compiler import ir

from passes.ir.named_ops import LAYER_ATTR


def layer_name(op: ir.Operation) -> str:
    """The op's module path (``layers.3.fc1``): its ``qmlir.layer`` (a training step's backward
    GEMMs, ``training-gemms``), else the one the importer put in its location, else ''."""
    if LAYER_ATTR in op.attributes:
        return ir.StringAttr(op.attributes[LAYER_ATTR]).value
    return _loc_name(op.location)


def _loc_name(loc: ir.Location) -> str:
    if isinstance(loc, ir.NameLoc):
        return loc.name_str
    if isinstance(loc, ir.CallSiteLoc):
        return _loc_name(loc.callee)
    if isinstance(loc, ir.FusedLoc):
        for inner in loc.locations:
            name = _loc_name(inner)
            if name:
                return name
    return ""
