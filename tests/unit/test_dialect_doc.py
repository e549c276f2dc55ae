"""docs/dialect.md matches the definition: one section per op kind, an attribute table per op
equal to its record's fields (name, type, optional), and each CUDA kernel named under its op."""

from __future__ import annotations

import re
from pathlib import Path

from passes.ir.cuda_kernels import KERNELS
from passes.ir.dialect import RECORDS, OpKind, record_fields

DOC = Path(__file__).resolve().parents[2] / "docs" / "dialect.md"
_SECTION = re.compile(r"^## `(\w+)`$", re.M)
_ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \|", re.M)


def _sections() -> dict[str, str]:
    text = DOC.read_text()
    heads = list(_SECTION.finditer(text))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return {h.group(1): text[h.end() : end] for h, end in zip(heads, ends, strict=True)}


def test_one_section_per_op_kind() -> None:
    assert list(_sections()) == [k.value for k in OpKind]


def test_attribute_tables_match_the_records() -> None:
    sections = _sections()
    for kind, record in RECORDS.items():
        documented = [(m.group(1), m.group(2).strip()) for m in _ROW.finditer(sections[kind.value])]
        expected = [
            (f.key, f.codec.what + ("" if f.required else ", optional"))
            for f in record_fields(record)
        ]
        assert documented == expected, kind.value


def test_each_cuda_kernel_is_named_under_its_op() -> None:
    sections = _sections()
    for kernel in KERNELS:
        assert f"`{kernel.entry}`" in sections[kernel.op.value], kernel.entry
