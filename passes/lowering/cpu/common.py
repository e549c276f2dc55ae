"""What every llvm-cpu lowering shares: its templates and the fields they all take.

A lowering returns the text of one ``func.func private`` definition for a declaration the
recipe pass emitted (same name, same type, same attributes), filled in from ``templates/``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from passes.base.errors import QmlirError
from passes.ir.attributes import NamedOp
from passes.ir.types import DYNAMIC, TensorInfo, shape_text

TEMPLATES = Path(__file__).parent / "templates"


@cache
def template(name: str) -> string.Template:
    """``templates/<name>``; a snippet's ``// snippet:`` interface line (``snippets.py``) is
    for readers and tests, not part of the text it splices in."""
    return string.Template(strip_interface((TEMPLATES / name).read_text()))


def strip_interface(text: str) -> str:
    """``text`` without its first line when that line is a ``// snippet:`` declaration."""
    first, _, rest = text.partition("\n")
    return rest if first.strip().startswith(INTERFACE_MARK) else text


INTERFACE_MARK = "// snippet:"


def definition(name: str, fields: Mapping[str, object] | None = None, **more: object) -> str:
    """The definition template ``name`` filled in, its last line ending in a comment that names
    it (a definition that fails to parse is reported with its template; the comment adds no
    line, so the ops' locations stay those of the template's lines)."""
    return name_template(template(name).substitute(fields or {}, **more), name)


def name_template(text: str, name: str) -> str:
    body = text.rstrip("\n")
    return f"{body}  {TEMPLATE_MARK}{name}" + text[len(body) :]


TEMPLATE_MARK = "// template: "


def dims(rank: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{i}" for i in range(rank)]


def iterators(kinds: list[str]) -> str:
    return ", ".join(f'"{k}"' for k in kinds)


def head(op: NamedOp) -> dict[str, object]:
    """``name`` and ``attrs``: the definition's symbol and attribute dictionary entries."""
    return {"name": op.name, "attrs": op.attr_text()}


def elementwise(op: NamedOp, shape: tuple[int, ...]) -> dict[str, object]:
    """:func:`head` and an identity iteration space over ``shape``."""
    names = dims(len(shape))
    return {
        **head(op),
        "shape": shape_text(shape),
        "dims": ", ".join(names),
        "parallels": iterators(["parallel"] * len(shape)),
        "reductions": iterators(["reduction"] * len(shape)),
    }


def matmul_maps(a: TensorInfo, b: TensorInfo, b_transposed: bool) -> dict[str, str]:
    """Indexing maps of ``[..., M, K] @ [K, N]`` or batched ``[B..., M, K] @ [B..., K, N]``."""
    if b.rank == 2:
        lead = dims(a.rank - 1, "m")
        batch: list[str] = []
    else:
        batch = dims(a.rank - 2, "b")
        lead = ["m"]
    names = batch + lead + ["n", "k"]
    b_idx = batch + (["n", "k"] if b_transposed else ["k", "n"])
    kinds = ["parallel"] * (len(names) - 1) + ["reduction"]

    def amap(idx: list[str]) -> str:
        return f"affine_map<({', '.join(names)}) -> ({', '.join(idx)})>"

    return {
        "mm_a_map": amap(batch + lead + ["k"]),
        "mm_b_map": amap(b_idx),
        "mm_out_map": amap(batch + lead + ["n"]),
        "mm_iterators": iterators(kinds),
    }


def contraction(a: TensorInfo, b: TensorInfo, out: TensorInfo, b_transposed: bool) -> str:
    """``%acc = %a_f32 @ %b_f32`` into ``%acc_init``: a named ``linalg.matmul`` for 2-D operands
    (``contraction_matmul.mlir``), a ``linalg.generic`` for N-D or batched ones."""
    two_d = a.rank == 2 and b.rank == 2
    name = "contraction_matmul.mlir" if two_d else "contraction_generic.mlir"
    return template(name).substitute(contraction_fields(a, b, out, b_transposed))


def contraction_fields(
    a: TensorInfo, b: TensorInfo, out: TensorInfo, b_transposed: bool
) -> dict[str, str]:
    return {
        "a_shape": shape_text(a.shape),
        "b_shape": shape_text(b.shape),
        "out_shape": shape_text(out.shape),
        **matmul_maps(a, b, b_transposed),
    }


def dim_defs(value: str, info: TensorInfo) -> tuple[str, dict[int, str]]:
    """The ops that read the dynamic dims of ``value`` (an SSA name of type ``info``), each on a
    line of its own after a leading newline (``""`` when ``info`` is static, so a static template
    keeps its lines and locations), and each dynamic dim's SSA name by position."""
    lines: list[str] = []
    names: dict[int, str] = {}
    for i, d in enumerate(info.shape):
        if d != DYNAMIC:
            continue
        base = f"%{value.lstrip('%')}_dim{i}"
        lines.append(f"  {base}_at = arith.constant {i} : index")
        lines.append(f"  {base} = tensor.dim {value}, {base}_at : {info.builtin()}")
        names[i] = base
    return "".join("\n" + line for line in lines), names


def empty_sizes(info: TensorInfo, names: dict[int, str]) -> str:
    """The operands of ``tensor.empty(...)`` of shape ``info``: the SSA names of its dynamic dims
    (from :func:`dim_defs` of a tensor with the same dims at those positions)."""
    missing = [i for i, d in enumerate(info.shape) if d == DYNAMIC and i not in names]
    if missing:
        raise QmlirError(
            f"no size for dynamic dim {missing[0]} of tensor<{shape_text(info.shape)}>"
        )
    return ", ".join(names[i] for i, d in enumerate(info.shape) if d == DYNAMIC)


def block_params(op: NamedOp, data: TensorInfo, grid: TensorInfo) -> dict[str, object]:
    """Template fields every block op shares: its name and attributes, data and grid shapes."""
    bm, bk = op.block()
    return {
        **head(op),
        "M": data.shape[0],
        "K": data.shape[1],
        "Mb": grid.shape[0],
        "Kb": grid.shape[1],
        "bm": bm,
        "bk": bk,
    }
