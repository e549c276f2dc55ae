"""What every llvm-cpu lowering shares: its templates and the fields they all take.

A lowering returns the text of one ``func.func private`` definition for a declaration the
recipe pass emitted (same name, same type, same attributes), filled in from ``templates/``.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from passes.base.errors import QmlirError
from passes.ir.dialect import NamedOp
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


def contraction(
    a: TensorInfo, b: TensorInfo, out: TensorInfo, b_transposed: bool, gemm: str = "f32"
) -> str:
    """``%acc = %a_f32 @ %b_f32`` into ``%acc_init``: a named ``linalg.matmul`` for 2-D operands
    (``contraction_matmul.mlir``), a ``linalg.generic`` for N-D or batched ones (its products
    widened from ``gemm`` operands narrower than f32: ``contraction_generic_widened.mlir``)."""
    if a.rank == 2 and b.rank == 2:
        name = "contraction_matmul.mlir"
    else:
        name = "contraction_generic.mlir" if gemm == "f32" else "contraction_generic_widened.mlir"
    return template(name).substitute(contraction_fields(a, b, out, b_transposed, gemm))


def narrowed(prefix: str, value: str, gemm: str) -> tuple[str, str]:
    """``(line, yielded)`` for a decode yielding f32 ``value`` as the GEMM's ``gemm`` operand: no
    line and ``value`` itself for f32, else the line narrowing it to ``%<prefix>gemm`` (exact
    where the ``gemm-operands`` pass chose bf16: passes/gemm_operands.py) and that name."""
    if gemm == "f32":
        return "", value
    return f"\n    %{prefix}gemm = arith.truncf {value} : f32 to {gemm}", f"%{prefix}gemm"


def gemm_operand_fields(op: NamedOp, a_value: str, b_value: str) -> dict[str, str]:
    """A scaled GEMM template's fields for its decoded operands' element type: ``gemm``, the
    value each decode yields (``a_value``, ``b_value``: f32) and the line narrowing it
    (:func:`narrowed`)."""
    gemm = op.attrs.operand_type
    narrow_a, a_yield = narrowed("a_", a_value, gemm)
    narrow_b, b_yield = narrowed("b_", b_value, gemm)
    return {
        "gemm": gemm,
        "narrow_a": narrow_a,
        "narrow_b": narrow_b,
        "a_yield": a_yield,
        "b_yield": b_yield,
    }


def contraction_fields(
    a: TensorInfo, b: TensorInfo, out: TensorInfo, b_transposed: bool, gemm: str = "f32"
) -> dict[str, str]:
    return {
        "gemm": gemm,
        "a_shape": shape_text(a.shape),
        "b_shape": shape_text(b.shape),
        "out_shape": shape_text(out.shape),
        **matmul_maps(a, b, b_transposed),
        **barrier_fields("a", a.with_dtype(gemm)),
        **barrier_fields("b", b.with_dtype(gemm)),
    }


def barrier_fields(operand: str, info: TensorInfo) -> dict[str, str]:
    """``<operand>_barrier_dims`` and ``<operand>_barrier_sizes``: the ops reading the dynamic
    dims of ``%<operand>_f32`` (of type ``info``: the decoded GEMM operand) and the ``{...}``
    sizes its ``compute_barrier.start`` takes."""
    defs, names = dim_defs(f"%{operand}_f32", info)
    sizes = ", ".join(names[i] for i in sorted(names))
    return {
        f"{operand}_barrier_dims": defs,
        f"{operand}_barrier_sizes": f"{{{sizes}}}" if sizes else "",
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


def block_params(
    op: NamedOp, data: TensorInfo, grid: TensorInfo, rows: Rows | None = None
) -> dict[str, object]:
    """Template fields every block op shares: its name and attributes, data and grid shapes
    (with ``rows``, dynamic ones: 1 x bk blocks, so the grid has the data's rows), and the
    ``m_defs`` / ``m`` fields of :class:`Rows`."""
    bm, bk = op.attrs.block
    rows = rows or Rows(data.shape[0])
    if rows.dynamic and bm != 1:
        raise QmlirError(f"named op @{op.name}: dynamic rows take 1 x {bk} blocks, not {bm} x {bk}")
    return {
        **head(op),
        "M": rows,
        "K": data.shape[1],
        "Mb": rows if rows.dynamic else grid.shape[0],
        "Kb": grid.shape[1],
        "bm": bm,
        "bk": bk,
        "m_defs": rows.defs(),
        "m": rows.empty,
    }


@dataclasses.dataclass(frozen=True)
class Rows:
    """The row count M of a block op's 2-D ``[M, ...]`` operands: a number, or dynamic (an
    activation's tokens), then ``?`` in types and ``%dyn_m`` (``tensor.dim`` of the argument
    ``first``, dim 0) where a size is needed. A static op's template text is as it was: each
    field is then the number, or empty where a dynamic size would be an operand."""

    count: int
    first: str = "%x"
    first_type: str = ""

    @property
    def dynamic(self) -> bool:
        return self.count == DYNAMIC

    def __str__(self) -> str:
        """In a type: ``?`` or the number."""
        return "?" if self.dynamic else str(self.count)

    @property
    def size(self) -> str:
        """In ``output_shape`` or an index computation: ``%dyn_m`` or the number."""
        return "%dyn_m" if self.dynamic else str(self.count)

    @property
    def empty(self) -> str:
        """The operand of ``tensor.empty`` of a tensor whose only dynamic dim is M."""
        return "%dyn_m" if self.dynamic else ""

    def defs(self, *scaled: tuple[str, int, int] | tuple[str, int, int, int]) -> str:
        """``%dyn_m`` read from ``first``, then :meth:`derive` of ``scaled``; each on a line of
        its own after a leading newline (``""`` when static: the template's numbers stand)."""
        if not self.dynamic:
            return ""
        lines = [
            "%dyn_m_at = arith.constant 0 : index",
            f"%dyn_m = tensor.dim {self.first}, %dyn_m_at : {self.first_type}",
        ]
        return "".join(f"\n  {line}" for line in lines) + self.derive(*scaled)

    def derive(self, *scaled: tuple[str, int, int] | tuple[str, int, int, int]) -> str:
        """For each ``(name, mul, align[, post])``, ``%dyn_<name>`` = ceil(M * mul / align) *
        align * post from ``%dyn_m``, on lines of their own after a leading newline (``""``
        when static)."""
        if not self.dynamic:
            return ""
        lines = []
        for name, mul, align, *post in scaled:
            factor = align * (post[0] if post else 1)
            value = "%dyn_m"
            if mul != 1:
                lines.append(f"%dyn_{name}_mul = arith.constant {mul} : index")
                lines.append(f"%dyn_{name}_raw = arith.muli %dyn_m, %dyn_{name}_mul : index")
                value = f"%dyn_{name}_raw"
            if align != 1:
                lines.append(f"%dyn_{name}_align = arith.constant {align} : index")
                lines.append(f"%dyn_{name}_n = arith.ceildivui {value}, %dyn_{name}_align : index")
                value = f"%dyn_{name}_n"
            lines.append(f"%dyn_{name}_factor = arith.constant {factor} : index")
            lines.append(f"%dyn_{name} = arith.muli {value}, %dyn_{name}_factor : index")
        return "".join(f"\n  {line}" for line in lines)

    def scaled(self, name: str, mul: int, align: int = 1, post: int = 1) -> str:
        """ceil(M * mul / align) * align * post: the number, or ``%dyn_<name>`` (:meth:`defs`)."""
        if self.dynamic:
            return f"%dyn_{name}"
        return str(-(-self.count * mul // align) * align * post)

    def scaled_type(self, mul: int, align: int = 1, post: int = 1) -> str:
        """:meth:`scaled` in a type."""
        return "?" if self.dynamic else self.scaled("", mul, align, post)


def x_rows_dynamic(op: NamedOp) -> bool:
    """Whether the op's first operand (an activation) has dynamic rows: its lowering then takes
    dynamic dims (another op's are refused by :meth:`NamedOp.signature`, and a dynamic dim that
    is not the activation's by :func:`empty_sizes` or :func:`row_signature`; the recipe pass
    emits neither)."""
    ins, _ = op.signature(dynamic=True)
    first = ins[0]
    return not first.is_static and first.rank >= 2 and first.shape[-1] != DYNAMIC


def row_signature(
    op: NamedOp, first: str = "%x"
) -> tuple[list[TensorInfo], list[TensorInfo], Rows]:
    """A block op's signature and its :class:`Rows`, read from its first argument (SSA name
    ``first`` in the template). Dynamic only in the rows: one dim of a tensor of rank <= 2
    (dim 0 of ``[M, K]``, dim 1 of a block1d-swizzled ``[k_blocks, pad4(M)]``, the one dim of
    mx-swizzled scales)."""
    ins, outs = op.signature(dynamic=x_rows_dynamic(op))
    for info in (*ins, *outs):
        if info.shape.count(DYNAMIC) > 1 or (info.rank > 2 and not info.is_static):
            raise QmlirError(
                f"named op @{op.name}: tensor<{shape_text(info.shape)}> has dynamic dims "
                "other than the rows"
            )
    return ins, outs, Rows(ins[0].shape[0], first, str(ins[0].builtin()))
