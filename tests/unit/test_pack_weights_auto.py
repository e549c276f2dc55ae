"""``--pack-weights auto``: ``decoded`` for a generator's external weights on llvm-cpu while
their decoded copies take at most half this host's memory; ``load`` otherwise."""

from __future__ import annotations

import dataclasses

from compiler.pipeline.options import CompileOptions, host_memory_bytes, resolve_pack_weights
from passes.base.target import Target
from passes.recipes import get_recipe

RECIPE = get_recipe("fp8-current")


def _mode(generator: bool, weights: str, device: str, decoded: int) -> str:
    target = Target(device, cuda_arch="sm_90") if device == "cuda" else Target(device)
    options = CompileOptions(RECIPE, target, weights=weights, pack_weights="auto")
    return resolve_pack_weights(options, generator, decoded).pack_weights


def test_auto_decodes_a_generators_external_weights_where_they_fit() -> None:
    half = host_memory_bytes() // 2
    assert _mode(True, "external", "llvm-cpu", 1 << 30 if half > 1 << 30 else 0) == "decoded"
    assert _mode(True, "external", "llvm-cpu", half + 1) == "load"  # an 8B on 24 GB
    assert _mode(True, "inline", "llvm-cpu", 0) == "load"
    assert _mode(False, "external", "llvm-cpu", 0) == "load"
    assert _mode(True, "external", "cuda", 0) == "load"


def test_a_chosen_mode_is_kept() -> None:
    options = CompileOptions(RECIPE, Target(), weights="external", pack_weights="call")
    assert resolve_pack_weights(options, True, 0) == options
    for mode in ("load", "decoded"):
        chosen = dataclasses.replace(options, pack_weights=mode)
        assert resolve_pack_weights(chosen, True, host_memory_bytes()).pack_weights == mode
