"""Dynamic dims in a lowered definition, for every cpu and cuda lowering.

A named op's tensors are static but for its activation's rows (a dynamic batch or sequence:
:func:`x_rows_dynamic`). Its lowering reads each dynamic size once, by ``tensor.dim`` of an
argument (:class:`Dim`: one dim; :class:`Dims`: a tensor's dims by position), derives the sizes of
other tensors from it (:meth:`Dim.derive`, :meth:`Dim.scaled`) and passes them wherever a dynamic
shape needs its sizes: ``tensor.empty`` operands (:meth:`Dims.empty`), ``output_shape``, a
``hal.dispatch.extern`` type's ``{...}``. A static op's text is as it was: each field is then the
number, or empty where a dynamic size would be an operand. The ops are the ``templates/dim_*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from passes.base.errors import QmlirError
from passes.ir.dialect import NamedOp
from passes.ir.types import DYNAMIC, TensorInfo, shape_text
from passes.lowering.definitions import Templates

TEMPLATES = Templates(Path(__file__).parent / "templates")

Size = int | str  # a size: a number, or the SSA name of an ``index`` read at run time
ROWS = "%dyn_m"  # M's SSA name (:meth:`Dim.rows`)


@dataclass(frozen=True)
class Dim:
    """One size: a number, or dynamic (``?`` in a type), then the ``index`` SSA value ``name``,
    read by ``tensor.dim`` of dim ``index`` of the argument ``source`` (of type
    ``source_type``) or, without ``source``, defined by other lines (:meth:`derive`)."""

    count: int
    name: str = ""
    source: str = ""
    source_type: str = ""
    index: int = 0

    @classmethod
    def read(cls, source: str, info: TensorInfo, index: int, name: str = "") -> Dim:
        """Dim ``index`` of ``source`` (of type ``info``); dynamic, the SSA value ``name``
        (``%<source>_dim<index>`` unless given)."""
        count = info.shape[index]
        if count != DYNAMIC:
            return cls(count)
        name = name or f"%{source.lstrip('%')}_dim{index}"
        return cls(count, name, source, str(info.builtin()), index)

    @classmethod
    def rows(cls, source: str, info: TensorInfo) -> Dim:
        """The row count M of a block op's 2-D ``[M, ...]`` operand ``source``: dim 0, the SSA
        value ``%dyn_m`` where dynamic."""
        return cls.read(source, info, 0, ROWS)

    @property
    def dynamic(self) -> bool:
        return self.count == DYNAMIC

    def __str__(self) -> str:
        """In a type: ``?`` or the number."""
        return "?" if self.dynamic else str(self.count)

    @property
    def size(self) -> str:
        """In ``output_shape`` or an index computation: the SSA name or the number."""
        return self.name if self.dynamic else str(self.count)

    @property
    def value(self) -> Size:
        """The number, or the SSA name (a cuda kernel's push constant and workload)."""
        return self.name if self.dynamic else self.count

    @property
    def empty(self) -> str:
        """The operand of ``tensor.empty`` of a tensor whose only dynamic dim is this one."""
        return self.name if self.dynamic else ""

    @property
    def braces(self) -> str:
        """``{size}`` after the type of a tensor whose only dynamic dim is this one, as an op taking
        a dynamic type's sizes spells it (``compute_barrier.start``, ``dispatch.extern``); empty
        when static."""
        return f"{{{self.name}}}" if self.dynamic else ""

    def defs(self, *scaled: tuple[str, int, int] | tuple[str, int, int, int]) -> str:
        """The lines reading this dim from ``source``, then :meth:`derive` of ``scaled``; each
        on a line of its own after a leading newline (``""`` when static: the template's
        numbers stand)."""
        if not self.dynamic:
            return ""
        read = ""
        if self.source:
            read = _lines(
                "dim_read.mlir",
                name=self.name,
                at=self.index,
                source=self.source,
                type=self.source_type,
            )
        return read + self.derive(*scaled)

    def derive(self, *scaled: tuple[str, int, int] | tuple[str, int, int, int]) -> str:
        """For each ``(name, mul, align[, post])``, ``%dyn_<name>`` = ceil(this * mul / align) *
        align * post, on lines of their own after a leading newline (``""`` when static)."""
        if not self.dynamic:
            return ""
        text = ""
        for name, mul, align, *post in scaled:
            factor = align * (post[0] if post else 1)
            out, value = f"%dyn_{name}", self.name
            if mul != 1:
                text += _lines("dim_mul.mlir", name=out, value=value, mul=mul)
                value = f"{out}_raw"
            if align != 1:
                text += _lines("dim_ceildiv.mlir", name=out, value=value, align=align)
                value = f"{out}_n"
            text += _lines("dim_times.mlir", name=out, value=value, factor=factor)
        return text

    def scaled(self, name: str, mul: int, align: int = 1, post: int = 1) -> str:
        """ceil(this * mul / align) * align * post: the number, or ``%dyn_<name>``
        (:meth:`derive`)."""
        if self.dynamic:
            return f"%dyn_{name}"
        return str(-(-self.count * mul // align) * align * post)

    def scaled_dim(self, name: str, mul: int, align: int = 1, post: int = 1) -> Dim:
        """:meth:`scaled` as a dim (its lines: :meth:`derive`)."""
        if self.dynamic:
            return Dim(DYNAMIC, self.scaled(name, mul, align, post))
        return Dim(int(self.scaled(name, mul, align, post)))

    def scaled_type(self, mul: int, align: int = 1, post: int = 1) -> str:
        """:meth:`scaled` in a type."""
        return "?" if self.dynamic else self.scaled("", mul, align, post)


@dataclass(frozen=True)
class Dims:
    """A tensor's dynamic dims by position (none: a static tensor's)."""

    at: Mapping[int, Dim] = field(default_factory=dict)

    @classmethod
    def read(cls, value: str, info: TensorInfo) -> Dims:
        """Each dynamic dim of ``value`` (an SSA name of type ``info``), read from it."""
        return cls({i: Dim.read(value, info, i) for i, d in enumerate(info.shape) if d == DYNAMIC})

    def defs(self) -> str:
        """The lines reading them (:meth:`Dim.defs`; ``""`` when static, so a static template
        keeps its lines and locations)."""
        return "".join(self.at[i].defs() for i in sorted(self.at))

    def empty(self, info: TensorInfo) -> str:
        """The operands of ``tensor.empty(...)`` of type ``info``: the sizes of its dynamic dims,
        which are these (the same dims at the same positions)."""
        return ", ".join(self._sizes(info, dynamic_only=True))

    def braces(self, info: TensorInfo) -> str:
        """:meth:`empty` in braces after the type ``info`` (:attr:`Dim.braces`); empty when
        static."""
        return "" if info.is_static else f"{{{self.empty(info)}}}"

    def shape(self, info: TensorInfo) -> str:
        """The entries of an ``output_shape`` of type ``info``: each dim's number, or its size
        here where dynamic."""
        return ", ".join(self._sizes(info, dynamic_only=False))

    def _sizes(self, info: TensorInfo, dynamic_only: bool) -> list[str]:
        missing = [i for i, d in enumerate(info.shape) if d == DYNAMIC and i not in self.at]
        if missing:
            raise QmlirError(
                f"no size for dynamic dim {missing[0]} of tensor<{shape_text(info.shape)}>"
            )
        return [
            self.at[i].name if d == DYNAMIC else str(d)
            for i, d in enumerate(info.shape)
            if d == DYNAMIC or not dynamic_only
        ]


def _lines(template: str, /, **fields: object) -> str:
    """``template`` filled in, each line after a leading newline, none after."""
    return "\n" + TEMPLATES.fragment(template, **fields)


def x_rows_dynamic(op: NamedOp) -> bool:
    """Whether the op's first operand (an activation) has dynamic rows: its lowering then takes
    dynamic dims (another op's are refused by :meth:`NamedOp.signature`, and a dynamic dim that
    is not the activation's by :meth:`Dims.empty` or :func:`row_signature`; the recipe pass
    emits neither)."""
    ins, _ = op.signature(dynamic=True)
    first = ins[0]
    return not first.is_static and first.rank >= 2 and first.shape[-1] != DYNAMIC


def row_signature(op: NamedOp, first: str = "%x") -> tuple[list[TensorInfo], list[TensorInfo], Dim]:
    """A block op's signature and its rows (:meth:`Dim.rows`), read from its first argument (SSA
    name ``first`` in the template). Dynamic only in the rows: one dim of a tensor of rank <= 2
    (dim 0 of ``[M, K]``, dim 1 of a block1d-swizzled ``[k_blocks, pad4(M)]``, the one dim of
    mx-swizzled scales)."""
    ins, outs = op.signature(dynamic=x_rows_dynamic(op))
    for info in (*ins, *outs):
        if info.shape.count(DYNAMIC) > 1 or (info.rank > 2 and not info.is_static):
            raise QmlirError(
                f"named op @{op.name}: tensor<{shape_text(info.shape)}> has dynamic dims "
                "other than the rows"
            )
    return ins, outs, Dim.rows(first, ins[0])
