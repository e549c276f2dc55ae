"""The llvm-cpu dispatch tables: every compute_scale rule has exactly one lowering, in the
table of the module that writes it (``cpu/lower.py`` merges them)."""

from __future__ import annotations

from passes.ir.dialect import OpKind, ScaleRule
from passes.lowering.cpu import block_scales, lower, per_tensor

# made by fuse-quantize-core for the cuda kernels only (docs/dialect.md)
CUDA_ONLY_RULES = {ScaleRule.NVFP4_GLOBAL_DECODE}


def test_every_rule_is_lowered_by_one_module() -> None:
    tables = [per_tensor.COMPUTE_SCALE, block_scales.COMPUTE_SCALE]
    listed = [rule for table in tables for rule in table]
    assert len(listed) == len(set(listed)), "a rule in two modules' tables"
    assert set(listed) == set(ScaleRule) - CUDA_ONLY_RULES


def test_the_merged_table_holds_each_module_entry() -> None:
    for table in (per_tensor.COMPUTE_SCALE, block_scales.COMPUTE_SCALE):
        for rule, lowering in table.items():
            assert lower.compute_scale_lowering(rule) is lowering


def test_every_op_kind_but_the_fused_one_has_a_cpu_selector() -> None:
    assert set(lower.LOWERINGS) == set(OpKind) - {OpKind.FUSED_QUANTIZE}
