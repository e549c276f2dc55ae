"""What every llvm-cpu lowering shares: its templates and the fields they all take.

A lowering returns the text of one ``func.func private`` definition for a declaration the
recipe pass emitted (same name, same type, same attributes), filled in from ``templates/``
(``passes/lowering/definitions.py``); its dynamic dims are ``passes/lowering/dims.py``'s.
"""

from __future__ import annotations

from pathlib import Path

from passes.base.errors import QmlirError
from passes.ir.dialect import NamedOp
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.definitions import Templates, head
from passes.lowering.dims import Dim, Dims

TEMPLATES = Path(__file__).parent / "templates"
_TEMPLATES = Templates(TEMPLATES)
template = _TEMPLATES.template  # templates/<name> (a snippet's interface line dropped)
definition = _TEMPLATES.definition  # a definition template filled in, its last line naming it
fragment = _TEMPLATES.fragment  # a template filled in as a field of another


def dims(rank: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{i}" for i in range(rank)]


def iterators(kinds: list[str]) -> str:
    return ", ".join(f'"{k}"' for k in kinds)


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
    dims = Dims.read(f"%{operand}_f32", info)
    return {
        f"{operand}_barrier_dims": dims.defs(),
        f"{operand}_barrier_sizes": dims.braces(info),
    }


def block_params(
    op: NamedOp, data: TensorInfo, grid: TensorInfo, rows: Dim | None = None
) -> dict[str, object]:
    """Template fields every block op shares: its name and attributes, data and grid shapes
    (with ``rows``, dynamic ones: 1 x bk blocks, so the grid has the data's rows), and the
    ``m_defs`` / ``m`` fields of the rows (:class:`Dim`)."""
    bm, bk = op.attrs.block
    rows = rows or Dim(data.shape[0])
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
