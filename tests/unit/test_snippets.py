"""The snippet templates (``passes/lowering/cpu/templates/*.mlir`` without a ``func.func``) keep
the interface their first line declares.

Grammar of that line (one line; single spaces between entries; the ``reads`` and ``defines``
lists may be empty, ``locals`` and ``holes`` are left out when they would be)::

    // snippet: reads V:T ...; defines V:T ...[; locals V ...][; holes NAME ...]

``V`` is an SSA value as the template spells it: a template parameter holding one (``${x}``),
an instance-prefixed name (``%${p}byte``; ``%${out}`` in ``mx_offset.mlir``) or a fixed name
(``%s``, ``%table#0``); ``T`` its type (no spaces, commas or semicolons). ``reads``: what the
instance uses without defining it, which the enclosing body must provide (its holes filled as
its Python caller fills them); ``defines``: what it defines at its own level for the body to use
afterwards (its results, and every fixed name it defines there); ``locals``: the fixed names it
defines inside its own regions (gone after them, but they must not already be defined where it
is spliced); ``holes``: its parameters that take other snippets' text (whose names those
snippets declare). ``common.template`` drops the line, so the spliced text is unchanged.

Each case instantiates one snippet file as its Python caller does: the function in
``snippets.py``, or, for files only other modules fill, ``Template.substitute`` with sample
values (the fields those modules pass). The fields each template was filled with are recorded,
so the interface line is filled with the very same ones. For every case:

* parse: the instance, wrapped as ``func.func @snippet(<reads>) -> (<defines' types>)``
  returning its defines, parses and verifies with ``iree.compiler.ir``: an undeclared read, or a
  declared define it lacks or types otherwise, fails. Snippets that use ``linalg.index`` (the
  ``dequant_*``) go in a 2-D ``linalg.generic`` body instead, yielding their defines; reads of a
  multi-result value (``%table#0``..) come from a ``builtin.unrealized_conversion_cast`` of
  arguments. Every snippet file gets this check; none is left to the static checks alone.
* hygiene (static): every SSA name it defines itself (op results, block arguments; the names its
  nested snippets define are checked against theirs) starts with its prefix or is declared, its
  fixed ones being exactly the declared ones; every declared name is defined, every read used.
* two instances of each prefixed snippet (prefixes ``t_`` and ``u_``) parse in one function.

Besides, the definition templates use no snippet value but a declared define, and the checkers
are shown to reject synthetic snippets that break each property.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from iree.compiler import ir

from passes.ir.formats import E2M1, E4M3, E5M2
from passes.ir.types import TensorInfo
from passes.lowering.cpu import block_amax, gemv, snippets
from passes.lowering.cpu.common import TEMPLATES, contraction_fields, template

# ---------------------------------------------------------------------------------------------
# the interface line

VALUE = r"(?:%|\$\{\w+\})[\w.$#{}-]*"  # %name, %${p}name, ${x}, %${out}_c4 (template spelling)
INTERFACE = re.compile(
    r"^ *// snippet: reads(?P<reads>(?: [^\s;]+)*); defines(?P<defines>(?: [^\s;]+)*)"
    r"(?:; locals(?P<locals>(?: [^\s;]+)+))?(?:; holes(?P<holes>(?: \w+)+))?$"
)
TYPED = re.compile(rf"(?P<name>{VALUE}):(?P<type>[^\s:;,]+)")


@dataclass(frozen=True)
class Interface:
    reads: tuple[tuple[str, str], ...]  # (value, type)
    defines: tuple[tuple[str, str], ...]
    locals: tuple[str, ...] = ()
    holes: tuple[str, ...] = ()


def parse_interface(line: str) -> Interface:
    """The interface a ``// snippet:`` line declares; ValueError if it is not one."""
    match = INTERFACE.match(line)
    if match is None:
        raise ValueError(f"not a '// snippet: reads ...; defines ...' line: {line!r}")

    def typed(clause: str) -> tuple[tuple[str, str], ...]:
        entries = []
        for entry in (match[clause] or "").split():
            item = TYPED.fullmatch(entry)
            if item is None:
                raise ValueError(f"{clause} entry {entry!r} is not VALUE:TYPE")
            entries.append((item["name"], item["type"]))
        return tuple(entries)

    names = tuple((match["locals"] or "").split())
    for name in names:
        if re.fullmatch(VALUE, name) is None:
            raise ValueError(f"locals entry {name!r} is not a value")
    return Interface(typed("reads"), typed("defines"), names, tuple((match["holes"] or "").split()))


def raw_text(file: str) -> str:
    return (TEMPLATES / file).read_text()


def interface_line(file: str) -> str:
    return raw_text(file).split("\n", 1)[0]


def snippet_files() -> list[str]:
    return sorted(p.name for p in TEMPLATES.glob("*.mlir") if "func.func" not in p.read_text())


def fields_of(text: str) -> set[str]:
    return {m["named"] or m["braced"] for m in string.Template.pattern.finditer(text)} - {None}


# ---------------------------------------------------------------------------------------------
# SSA names in MLIR text

SSA = r"%[\w.$-]+"
COUNT = r"(?::(?:\d+|\$\{\w+\}))?"  # ``%t:3`` or a template's ``%t:${N}``
RESULTS = re.compile(rf"^\s*({SSA}{COUNT}(?:\s*,\s*{SSA}{COUNT})*)\s*=", re.M)
BLOCK_ARGS = re.compile(r"\^bb\w*\(([^)]*)\)")
FUNC_ARGS = re.compile(r"func\.func[^(]*\(([^)]*)\)")
LOOP_VARS = re.compile(rf"scf\.for\s+({SSA})\s*=")
ITER_ARGS = re.compile(r"iter_args\(([^)]*)\)")  # ``iter_args(%m = %init, ...)``
ITER_ARG = re.compile(rf"({SSA})\s*=")
WORKGROUPS = re.compile(r"workgroups\(([^)]*)\)")  # an export's workload arguments
ARG = re.compile(rf"({SSA})\s*:")


def strip_comments(text: str) -> str:
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def base(name: str) -> str:
    """``%table#1`` -> ``table``, ``%table:3`` -> ``table``, ``%s`` -> ``s``."""
    return re.split(r"[#:]", name.strip().lstrip("%"), maxsplit=1)[0]


def definitions(text: str) -> Counter[str]:
    """Names (without ``%``; ``%t:3`` as ``t``) of the op results and block arguments ``text``
    defines, each as often as it does."""
    code = strip_comments(text)
    names = Counter(base(n) for m in RESULTS.finditer(code) for n in m[1].split(","))
    for block in BLOCK_ARGS.finditer(code):
        names.update(base(a) for a in ARG.findall(block[1]))
    names.update(base(v) for v in LOOP_VARS.findall(code))
    for loop in ITER_ARGS.finditer(code):
        names.update(base(a) for a in ITER_ARG.findall(loop[1]))
    for export in WORKGROUPS.finditer(code):
        names.update(base(a) for a in ARG.findall(export[1]))
    return names


def result_groups(text: str) -> dict[str, int]:
    """``%t:3 = ...`` -> ``{"t": 3}``."""
    groups = {}
    for m in RESULTS.finditer(strip_comments(text)):
        for n in m[1].split(","):
            name, _, count = n.strip().partition(":")
            if count:
                groups[base(name)] = int(count)
    return groups


def uses(text: str, value: str) -> bool:
    return re.search(rf"{re.escape(value)}(?![\w.$-])", strip_comments(text)) is not None


# ---------------------------------------------------------------------------------------------
# instances, as their callers make them, with the fields each template was filled with


@dataclass(frozen=True)
class Instance:
    file: str
    text: str  # as spliced (no interface line)
    interface: Interface  # its line, filled with the instance's fields
    prefix: str | None = None  # the value of its prefix field (None: it has none)
    parts: tuple[Instance, ...] = ()  # instances of snippet files inside ``text`` (its holes)

    @property
    def context(self) -> str:
        """``body`` (in a linalg.generic body) for one that reads linalg.index, else ``func``."""
        body = "linalg.index" in self.text and "linalg.generic" not in self.text
        return "body" if body else "func"


@dataclass(frozen=True)
class Fill:
    file: str
    fields: Mapping[str, object] | None  # None: the template's text taken as it is
    text: str


class Recorder:
    """Stands in for ``common.template``: the same templates, each fill recorded."""

    def __init__(self) -> None:
        self.fills: list[Fill] = []

    def __call__(self, file: str) -> Any:
        real, fills = template(file), self.fills

        class Recording:
            @property
            def template(self) -> str:
                fills.append(Fill(file, None, real.template))
                return real.template

            def substitute(
                self, mapping: Mapping[str, object] | None = None, /, **more: object
            ) -> str:
                fields = {**(mapping or {}), **more}
                text = real.substitute(fields)
                fills.append(Fill(file, fields, text))
                return text

        return Recording()


RECORDER: Recorder | None = None


def fill(file: str) -> Any:
    """``template(file)``, recorded like the ones ``snippets`` fills: the test's own fills."""
    assert RECORDER is not None
    return RECORDER(file)


@contextmanager
def recording() -> Iterator[Recorder]:
    global RECORDER
    recorder, saved = Recorder(), snippets.template
    RECORDER, snippets.template = recorder, recorder  # type: ignore[assignment]
    try:
        yield recorder
    finally:
        RECORDER, snippets.template = None, saved  # type: ignore[assignment]


def prefix_field(file: str) -> str | None:
    """The field whose value starts the snippet's own names (``%${p}...``), if any."""
    match = re.search(r"%\$\{(\w+)\}", strip_comments(raw_text(file).split("\n", 1)[1]))
    return match[1] if match else None


def instance(fills: list[Fill], root: Fill) -> Instance:
    line = interface_line(root.file)
    if root.fields is not None:
        line = string.Template(line).substitute(root.fields)  # KeyError: a field it is not given
    key = prefix_field(root.file)
    prefix = None if key is None or root.fields is None else str(root.fields[key])
    at = next(i for i, f in enumerate(fills) if f is root)
    earlier = [f for f in fills[:at] if f.text and f.text in root.text]
    outermost = [f for f in earlier if not any(f is not g and f.text in g.text for g in earlier)]
    parts = tuple(instance(fills, f) for f in outermost)
    return Instance(root.file, root.text, parse_interface(line), prefix, parts)


def build(case: str, p: str) -> Instance:
    """The instance of ``CASES[case]`` made with prefix ``p`` (where it takes one)."""
    file, make = CASES[case]
    with recording() as recorder:
        make(p)
    roots = [f for f in recorder.fills if f.file == file]
    assert roots, f"{case}: {file} is not filled"
    return instance(recorder.fills, roots[-1])


def _mx_offset(p: str, row: str = "%a0", col: str = "%a1") -> str:
    # as swizzle.mx_offset(cols, row, col, out): its out is the prefix of its names
    return fill("mx_offset.mlir").substitute(out=f"{p}off", row=row, col=col, col_tiles=1)


def _unswizzle_mx(p: str) -> str:  # as swizzle.unswizzle(p, "%a0", "tensor<512xi8>", Dim(4), 2)
    offset = _mx_offset(p, f"%{p}r", f"%{p}c")
    return fill("unswizzle_mx.mlir").substitute(
        p=p,
        swizzled="%a0",
        swizzled_type="tensor<512xi8>",
        rows=4,
        rows_empty="",
        cols=2,
        offset=offset,
    )


def _dequant_block_e8m0(p: str) -> str:  # as block_matmul._dequant
    decode, ldexp = snippets.decode(p, E4M3), snippets.ldexp(f"{p}l_", f"%{p}val", f"%{p}shift")
    return fill("dequant_block_e8m0.mlir").substitute(p=p, decode=decode, ldexp=ldexp)


def _dequant_block_fp32(p: str) -> str:  # as block_matmul._dequant
    return fill("dequant_block_fp32.mlir").substitute(p=p, decode=snippets.decode(p, E4M3))


def _block_scale_index(
    p: str, br: int = 128, scales: str = "%a0", scale_type: str = "tensor<1x2xf32>"
) -> str:  # as block_matmul._decode, br x 128 blocks (128x128 unless given), block2d
    return fill("block_scale_index.mlir").substitute(
        p=p,
        layout="block2d",
        row_dim=0,
        k_dim=1,
        bk=128,
        br=br,
        scales=scales,
        read=f"%{p}rb, %{p}kb",
        scale_type=scale_type,
        scale_elem="f32",
    )


def _decode_view(fields: dict[str, object], kb: int, bk: int) -> object:
    # as block_matmul._view of 4 static rows of kb whole blocks of bk, scales [rows, blocks]
    return fill("block_decode_view.mlir").substitute(
        fields,
        Kb=kb,
        bk=bk,
        view=f"4x{kb}x{bk}",
        view_sizes="",
        scale_sizes="",
        scale_index="r, b",
    )


def _block_decode(view: bool) -> Callable[[str], object]:
    # as block_matmul._decode of a [4, 256] operand, fp32 scales [4, 2] of 1 x 128 blocks, bf16
    def make(p: str) -> object:
        fields: dict[str, object] = {
            "p": p,
            "codes": "%a0",
            "shape": "4x256",
            "gemm": "bf16",
            "sizes": "",
            "scales": "%a1",
            "scale_type": "tensor<4x2xf32>",
            "scale_doc": "fp32 scales, block2d layout",
            "dequant": _dequant_block_fp32(p),
            "narrow": f"\n    %{p}gemm = arith.truncf %{p}deq : f32 to bf16",
            "yield": f"%{p}gemm",
        }
        if view:
            return _decode_view({**fields, "rows_size": 4, "scale_elem": "f32"}, 2, 128)
        scale = _block_scale_index(p, br=1, scales="%a1", scale_type="tensor<4x2xf32>")
        return fill("block_decode_index.mlir").substitute(fields, scale=scale)

    return make


def _block_quantize(form: str) -> Callable[[str], object]:
    # as block_quantize._data of a [4, 64] x (4 x 48 when split: 32 + a tail of 16) with 1 x 32
    # blocks, fp32 scales
    def make(p: str) -> object:
        fields: dict[str, object] = {
            "M": 4,
            "K": 64,
            "Mb": 4,
            "Kb": 2,
            "bm": 1,
            "bk": 32,
            "m": "",
            "element": snippets.encode(E4M3, prefix="q_"),
            "result": "%q_byte",
            "scale_elem": "f32",
        }
        fields["M_size"] = 4
        rows = {"r_defs": "", "r_empty": "", "r_braces": "", "tiling": ""}  # static, untiled
        view = {**fields, **rows, "N": 256, "R": 8, "R_size": 8}
        if form == "index":
            return fill("block_quantize_index.mlir").substitute(fields)
        if form == "tiles":  # 2 x 32 blocks tiling the [4, 64] x whole
            return fill("block_quantize_tiles.mlir").substitute(fields, Mb=2, bm=2)
        if form == "view":
            return fill("block_quantize_view.mlir").substitute(view, p=p, x="%a0", scale="%a1")
        head = fill("block_quantize_view.mlir").substitute(
            view, p="h_", x="%x_head", scale="%scale_head", K=32, Kb=1, N=128, R=4, R_size=4
        )
        tail = fill("block_quantize_tail.mlir").substitute(
            fields, p="t_", x="%x_tail", scale="%scale_tail", K=16
        )
        if form == "tail":
            return fill("block_quantize_tail.mlir").substitute(
                fields, p=p, x="%a0", scale="%a1", K=16
            )
        return fill("block_quantize_split.mlir").substitute(
            fields, K=48, Kw=1, K_head=32, t=16, head=head, tail=tail
        )

    return make


def _decode_fields(
    q: str, shape: str, codes: str, scales: str, scale_type: str
) -> dict[str, object]:  # as block_matmul._fields, mx scales, f32 operands
    return {
        "p": q,
        "codes": codes,
        "shape": shape,
        "gemm": "f32",
        "sizes": "",
        "rows_size": 4,
        "scales": scales,
        "scale_type": scale_type,
        "scale_elem": "i8",
        "scale_doc": "e8m0 scales, mx layout",
        "dequant": _dequant_block_e8m0(q),
        "narrow": "",
        "yield": f"%{q}deq",
    }


def _block_decode_tail(p: str) -> object:  # the partial block of a [4, 48] operand
    return fill("block_decode_tail.mlir").substitute(
        _decode_fields(p, "4x16", "%a0", "%a1", "tensor<4x1xi8>"), t=16, scale_index="r, 0"
    )


def _block_decode_split(p: str) -> object:
    # as block_matmul._decode of a [4, 48] operand: one block of 32 and a tail of 16, mx scales
    head = _decode_view(
        _decode_fields(f"{p}h_", "4x32", f"%{p}head_codes", f"%{p}head_scales", "tensor<4x1xi8>"),
        1,
        32,
    )
    tail = fill("block_decode_tail.mlir").substitute(
        _decode_fields(f"{p}t_", "4x16", f"%{p}tail_codes", f"%{p}tail_scales", "tensor<4x1xi8>"),
        t=16,
        scale_index="r, 0",
    )
    return fill("block_decode_split.mlir").substitute(
        _decode_fields(p, "4x48", "%a0", "%a1", "tensor<4x2xi8>"),
        Kw=1,
        bk=32,
        t=16,
        K_head=32,
        head_shape="4x32",
        tail_shape="4x16",
        head_scale_sizes="4, 1",
        head_scale_type="tensor<4x1xi8>",
        tail_scale_offsets="0, 1",
        tail_scale_sizes="4, 1",
        tail_scale_type="tensor<4x1xi8>",
        head=head,
        tail=tail,
    )


def _quantize_e8m0_element(p: str) -> str:  # as block_quantize.lower_quantize_e8m0_scales
    encode = snippets.encode(E4M3, x=f"%{p}x_in", s=f"%{p}mult", prefix=p)
    return fill("quantize_e8m0_element.mlir").substitute(
        p=p, x="%a0", s="%a1", encode=encode, nan_code=E4M3.nan_code
    )


def _dequant_nvfp4(p: str) -> str:  # as nvfp4._dequant_nvfp4
    return fill("dequant_nvfp4.mlir").substitute(
        p=p,
        decode=snippets.decode(f"{p}s_", E4M3),
        decode_fp4=snippets.decode_e2m1(p, f"%{p}fp4"),
    )


def _dequant_mxfp4(p: str) -> str:  # as mxfp4._dequant
    return fill("dequant_mxfp4.mlir").substitute(
        p=p,
        decode_fp4=snippets.decode_e2m1(p, f"%{p}fp4"),
        ldexp=snippets.ldexp(f"{p}l_", f"%{p}fp4", f"%{p}shift"),
    )


def _dequant_fp4_blocks(p: str) -> str:  # as nvfp4._decoded for an nvfp4 A of 4 x 32 codes
    return fill("dequant_fp4_blocks.mlir").substitute(
        p=p,
        data="%a0",
        data_type="tensor<4x16xi8>",
        braces="",
        rows=4,
        rows_size=4,
        empty="",
        Kp=32,
        kb=2,
        block=16,
        gemm="f32",
        element=_dequant_nvfp4(p),
        yielded=f"%{p}deq",
    )


def _e8m0_rule(rounding: str) -> tuple[str, Callable[[str], object]]:
    file = f"e8m0_rule_{rounding}.mlir"
    if rounding.startswith("cudnn"):  # block_scales.lower_compute_scale_cudnn: as it is
        return file, lambda _: fill(file).template
    return file, lambda _: fill(file).substitute(  # lower_compute_scale_e8m0 (E4M3's)
        emax_elem=8, mbits=3, round_bit=1 << 19
    )


def _nvfp4_enc(order: str) -> str:  # as nvfp4.lower_nvfp4_quantize
    decode_d = snippets.decode("d_", E4M3)
    if order == "torchao":
        return fill("nvfp4_enc_torchao.mlir").substitute(decode_d=decode_d)
    return fill("nvfp4_enc_te.mlir").substitute(
        decode_d=decode_d,
        sd_f64=snippets.f64_from_f32("sd_", "%sd"),
        p_f32=snippets.f32_from_f64("p_", "%p64"),
        p_back=snippets.f64_from_f32("pb_", "%p_f32"),
    )


def _nvfp4_block_table(order: str) -> str:
    enc = _nvfp4_enc(order)
    return fill("nvfp4_block_table.mlir").substitute(enc_doc="sample", enc_body=enc)


def _encode(fmt_name: str) -> tuple[str, Callable[[str], object]]:
    fmt = {"e4m3": E4M3, "e5m2": E5M2, "e2m1": E2M1}[fmt_name]
    return "encode_fp8.mlir", lambda p: snippets.encode(fmt, x="%a0", s="%a1", prefix=p)


def _contraction(file: str, gemm: str = "f32") -> tuple[str, Callable[[str], object]]:
    # as common.contraction: 2-D with B as [N, K] (named matmul), batched [B, M, K] @ [B, K, N]
    if file == "contraction_matmul.mlir":
        shapes, transposed = ((4, 8), (3, 8), (4, 3)), True
    else:
        shapes, transposed = ((2, 4, 8), (2, 8, 3), (2, 4, 3)), False
    a, b, out = (TensorInfo(shape, "f32") for shape in shapes)
    fields = contraction_fields(a, b, out, transposed, gemm)
    return file, lambda _: fill(file).substitute(fields)


_INTERLEAVE = "[" + ", ".join(str(j // 2 + (64 if j % 2 else 0)) for j in range(128)) + "]"
_ZEROS = "[" + ", ".join(["0"] * 64) + "]"
_ZEROS32 = "[" + ", ".join(["0"] * 32) + "]"


def _gemv(file: str) -> tuple[str, Callable[[str], object]]:
    # as gemv.lower_gemv fills them: a second chunk of 64 codes over [8, 128] codes; fp8-block's
    # scale grids (K blocks 1, B's block2d [4, 4]); mxfp8's (K blocks 4, B [8, 4]); and the
    # decode-step kernels' rows as decode_attention.attention_definitions fills them
    fields: dict[str, object] = {
        "gemv_fp8_decode.mlir": dict(N=8, K=128, offset=64, interleave=_INTERLEAVE),
        "gemv_accumulate.mlir": dict(acc_a="%a0", acc_b="%a1"),
        "gemv_fp4_decode.mlir": dict(N=8, K=128, XK=256, offset=64, interleave=_INTERLEAVE),
        "gemv_accumulate_fp4.mlir": dict(acc_a="%a0", acc_b="%a1"),
        "gemv_accumulate_fp4_i8.mlir": dict(acc_a="%a0", acc_b="%a1"),
        "gemv_fp4_scales.mlir": dict(KB=16, N=8),
        "gemv_defs_fp4_tables.mlir": dict(fp4_hi=_ZEROS, fp4_lo=_ZEROS),
        "gemv_defs_fp4_i8.mlir": dict(LANES=32, table=_ZEROS32),
        "gemv_fp4_decode_i8.mlir": dict(N=8, K=128, XK=256, LANES=32, offset=64),
        "gemv_fp4_offsets.mlir": dict(XK=256, LANES=32),
        "gemv_defs_block.mlir": dict(KB=2, RB=4, WKB=4, bk=128, rb=128, ws_elem="f32"),
        "gemv_defs_fp4.mlir": dict(KB=16, N=8, K=128),
        "gemv_defs_bf16_tables.mlir": dict(hi0=_ZEROS, hi1=_ZEROS, lo0=_ZEROS, lo1=_ZEROS),
        "gemv_defs_f32.mlir": dict(sums_factor="0x43800000"),
        "gemv_scales_times.mlir": dict(KB=4, factor="0x43800000"),
        "decode_attention_row_bf16.mlir": dict(cache="%k", BK=2, S=8, E=16),
        "decode_attention_row_f32.mlir": dict(cache="%k", BK=2, S=8, E=16),
        "gemv_restore_mxcsr.mlir": {},
        "gemv_accumulate_f32.mlir": dict(acc_a="%a0", acc_b="%a1"),
        "gemv_products_bf16.mlir": {},
        "gemv_x_bf16.mlir": dict(val="%v"),
        "gemv_x_f32.mlir": dict(val="%v", factor=256.0),
        "gemv_x_i8.mlir": dict(val="%v"),
        "gemv_nan_rows.mlir": dict(N=8, K=128, codes="%b"),
        "gemv_fp4_scales_f16.mlir": dict(KB=16, N=8),
        "gemv_mxfp4_scales_i8.mlir": dict(KB=8, N=8),
        "gemv_accumulate_mxfp4_i8.mlir": dict(acc_a="%a0", acc_b="%a1"),
        "gemv_defs_mxfp4.mlir": dict(KB=8, N=8, K=128),
        "gemv_products_f32_blocks.mlir": {},
        "gemv_defs_factors.mlir": dict(KB=4),
        "gemv_block_factors.mlir": dict(KB=2, RB=4, WKB=2),
        "gemv_accumulate_factors.mlir": dict(acc_a="%a0", acc_b="%a1", KB=4, L=16),
        "gemv_prefetch_defs.mlir": dict(N=8, K=128, NK=1024, distance=2048, last=1023),
        "gemv_prefetch.mlir": dict(NK=1024),
        "gemv_accumulate_scaled_block.mlir": dict(acc_a="%a0", acc_b="%a1", KB=2, L=8),
    }[file]
    return file, lambda p: fill(file).substitute(fields, p=p)


def _prefill(file: str) -> tuple[str, Callable[[str], object]]:
    # as prefill_attention.prefill_definitions fills them: a block of 4 rows, tiles of 8 keys,
    # 2 rows a step, head dim 16 (8 pairs), a cache of 32 positions, 2 K/V heads
    sizes = dict(R=4, E=16, L=8, U=2, B=1, S=32)
    fields: dict[str, object] = {
        "prefill_attention_fma.mlir": dict(i=1, acc="%a1", **sizes),
        "prefill_attention_tile_store.mlir": dict(i=1, acc="%a1", **sizes),
        "prefill_attention_row.mlir": dict(u=1, **sizes),
        "prefill_attention_max_half.mlir": dict(src="%x1_s", W=4, W2=8, **sizes),
        "prefill_attention_softmax.mlir": dict(**sizes),
        "prefill_attention_dot.mlir": dict(i=1, acc="%a1", EP=8, KL=16, **sizes),
        "prefill_attention_q_f32.mlir": dict(**sizes),
        "prefill_attention_q_pairs.mlir": dict(EP=8, **sizes),
        "prefill_attention_kt_f32.mlir": dict(kv_rows=2, **sizes),
        "prefill_attention_kt_pairs.mlir": dict(kv_rows=2, EP=8, **sizes),
        "prefill_attention_q_as_is.mlir": dict(**sizes),
        "prefill_attention_q_bf16.mlir": dict(**sizes),
        "prefill_attention_pv.mlir": dict(slot="%x1_slot", acc="%o1", **sizes),
        "prefill_attention_row_store.mlir": dict(
            value="%o", buffer="%os", i="%x1_i", W=16, **sizes
        ),
    }[file]
    return file, lambda p: fill(file).substitute(fields, p=p)


def _gemm(file: str) -> tuple[str, Callable[[str], object]]:
    # as gemm.py fills them: B [32, 128] codes, x tiled [?, 64, 16], panels of 64 lines
    fields: dict[str, object] = {
        "fp8_bf16_lookup.mlir": dict(interleave=_INTERLEAVE),
        "gemm_w_rows.mlir": dict(ra=2, rb=3),
        "gemm_x_rows.mlir": dict(ra=2, rb=3),
        "gemm_products.mlir": dict(KH=64, i=3, t="%t", kp="%kp", wv="%wv", acc="%a3"),
        "gemm_store_bf16.mlir": dict(v="%a3", row="%r3", N=32),
        "gemm_store_bf16_tail.mlir": dict(v="%a3", row="%r3", N=32, i=3, **{"in": "%in3"}),
        "gemm_acc_alpha.mlir": dict(acc="%a3"),
        "gemm_round_alpha.mlir": dict(doc="per-tensor scales"),
        "gemm_rows_2d.mlir": dict(M=20, AK=128, a_elem="i8"),
        "gemm_bf16_rows.mlir": dict(src="%w", src_type="memref<32x128xbf16>"),
        "gemm_prefetch_line.mlir": dict(
            q0="%pf_q0",
            n="%pf_n",
            col0="%pf_col0",
            w_type="memref<32x128xi8>",
            i=3,
            row_last=31,
            col_last=64,
            line_elems=64,
        ),
        "gemm_alpha.mlir": dict(
            out_shape="1x?x32",
            sa="%sa",
            sb="%sb",
            out_sizes="%d",
            size_reads=" %d:index",
            out_dims="d0, d1, d2",
            out_parallels='"parallel", "parallel", "parallel"',
        ),
        "gemm_alpha_one.mlir": dict(out_shape="20x32", out_elem="bf16"),
        "gemm_block_scales.mlir": dict(
            scales_type="memref<4x?xf32>",
            dims="{%s_rows}",
            rows_map="(s0 ceildiv 4) * 4",
            doc="A's",
        ),
        "gemm_x_scales.mlir": dict(
            sa_type="tensor<4x8xf32>", sa_any_type="tensor<4x?xf32>", rows_map="(s0 ceildiv 4) * 4"
        ),
        "gemm_out_2d.mlir": dict(M=20, N=32, out_elem="f32"),
        "gemm_scales_decoded.mlir": dict(),
        "gemm_collapse.mlir": dict(
            a_shape="1x?x128", M="?", AK=128, a_elem="bf16", groups="[0, 1], [2]"
        ),
        "gemm_expand.mlir": dict(
            M="?",
            N=32,
            out_shape="1x?x32",
            groups="[0, 1], [2]",
            sizes="1, %d, 32",
            size_reads=" %d:index",
            out_elem="bf16",
        ),
    }[file]
    return file, lambda p: fill(file).substitute(fields, p=p)


def _gemm_prefetch(p: str) -> object:  # as gemm.py fills it: two lines, nested
    line = fill("gemm_prefetch_line.mlir")
    lines = [
        line.substitute(
            p=f"{p}{i}_",
            q0=f"%{p}q0",
            n=f"%{p}n",
            col0=f"%{p}col0",
            w_type="memref<32x128xi8>",
            i=i,
            row_last=31,
            col_last=64,
            line_elems=64,
        )  # fmt: skip
        for i in range(2)
    ]
    return fill("gemm_prefetch.mlir").substitute(
        p=p, w_type="memref<32x128xi8>", P=2, codes_per_elem=1, lines="\n".join(lines)
    )


def _gemm_scale_fp32(p: str) -> object:  # two rows' fp32 block scales, as gemm.Scales
    return fill("gemm_scale_fp32.mlir").substitute(  # A's block1d layout: [K blocks, rows]
        p=p,
        scales_type="memref<1x?xf32>",
        bk=128,
        rb=1,
        at_a=f"%{p}kb, %{p}ba",
        at_b=f"%{p}kb, %{p}bb",
    )


def _gemm_panel_scale(p: str) -> object:
    return fill("gemm_panel_scale.mlir").substitute(p=p, fa="%fa", fb="%fb", concat=list(range(64)))


_FP8_TABLES = "".join(
    f" %{v}:vector<64xi8>"
    for v in ("sign", "hi_lo_table", "hi_hi_table", "lo_lo_table", "lo_hi_table")
)
_FP4_TABLES = "".join(f" %{v}:vector<64xi8>" for v in ("nibble", "four", "hi_table", "lo_table"))


_DECODED_READS = " %sdec:memref<16x32xf32> %kq:index"


def _gemm_panel_scaling(scale_format: str, p: str) -> tuple[str, str]:
    """As gemm.Scales.text: two rows' block scales read (E4M3, E8M0: from %sdec) and multiplied
    into their values, rounded to bf16; the text and the reads it adds to
    gemm_panel_rows.mlir's."""
    rounded = _gemm_panel_round(p)
    if scale_format == "nvfp4":  # each row's two blocks of 16
        product = fill("gemm_panel_scale16.mlir").substitute(
            p=p,
            **{f"f{r}": f"%{p}{r}_val" for r in ("a0", "a1", "b0", "b1")},
            concat16=list(range(32)),
            concat32=list(range(64)),
        )
        read = _gemm_scale_decoded("e4m3")(p)
        return f"{read}\n{product}\n{rounded}", _DECODED_READS
    fp32 = scale_format == "fp32"
    names = (f"%{p}fa", f"%{p}fb") if fp32 else (f"%{p}da_f32", f"%{p}db_f32")
    product = fill("gemm_panel_scale.mlir").substitute(
        p=p, fa=names[0], fb=names[1], concat=list(range(64))
    )
    if fp32:
        return f"{_gemm_scale_fp32(p)}\n{product}\n{rounded}", " %scales:memref<1x?xf32>"
    read = _gemm_scale_decoded("e8m0")(p)
    return f"{read}\n{product}\n{rounded}", _DECODED_READS


def _gemm_panel_round(p: str) -> object:
    return fill("gemm_panel_round.mlir").substitute(p=p, concat=list(range(64)))


def _gemm_scale_decoded(scale_format: str) -> Callable[[str], object]:
    def make(p: str) -> object:  # rows 2 and 3's scales from %sdec, as gemm.Scales.text
        if scale_format == "e4m3":
            return fill("gemm_scale_e4m3_decoded.mlir").substitute(p=p, ra=2, rb=3)
        return fill("gemm_scale_e8m0_decoded.mlir").substitute(p=p, ra=2, rb=3, bk=32)

    return make


def _gemm_scales_rows(scale_format: str) -> Callable[[str], object]:
    def make(p: str) -> object:  # as gemm.decode_scales: rows 2 and 3's 24 scales of a K block
        sb = 24
        pad = [*range(sb), *[0] * (32 - sb), *range(sb, 2 * sb), *[sb] * (32 - sb)]
        e4m3 = scale_format == "e4m3"
        decode = _gemm_scales_decode(scale_format)(p)
        return fill("gemm_scales_rows.mlir").substitute(
            p=p,
            ra=2,
            rb=3,
            sb=sb,
            bk=16 if e4m3 else 32,
            pad=pad,
            scales_type="memref<32x48xi8>",
            decode_reads=_FP8_TABLES if e4m3 else "",
            decode=decode,
        )

    return make


def _gemm_scales_decode(scale_format: str) -> Callable[[str], object]:
    def make(p: str) -> object:
        if scale_format == "e4m3":
            lookup = fill("fp8_bf16_lookup.mlir").substitute(p=p, interleave=_INTERLEAVE)
            return fill("gemm_scales_e4m3.mlir").substitute(
                p=p, table_reads=_FP8_TABLES, lookup=lookup
            )
        return fill("gemm_scales_e8m0.mlir").substitute(p=p)

    return make


def _gemm_panel_rows(scale_format: str | None) -> Callable[[str], object]:
    def make(p: str) -> object:  # two rows of B (32 rows, 128 codes), lookup and scales nested
        if scale_format == "nvfp4":  # E2M1 codes, 16 bytes a row of 32 codes
            lookup = _gemm_fp4_lookup(p)
            codes = dict(src_type="memref<32x64xi8>", width=16, col="%kh", table_reads=_FP4_TABLES)
        else:
            lookup = fill("fp8_bf16_lookup.mlir").substitute(p=p, interleave=_INTERLEAVE)
            codes = dict(src_type="memref<32x128xi8>", width=32, col="%k", table_reads=_FP8_TABLES)
        scale, values, reads = "", f"%{p}values", ""
        if scale_format is not None:
            (scale, reads), values = _gemm_panel_scaling(scale_format, p), f"%{p}scaled"
        width = int(str(codes["width"]))
        return fill("gemm_panel_rows.mlir").substitute(
            codes,
            p=p,
            src="%w",
            concat=list(range(2 * width)),
            widen=list(range(64)),
            both=2 * width,
            lookup=lookup,
            scale=scale,
            values=values,
            scale_reads=reads,
        )

    return make


_FP4_INTERLEAVE = [j // 2 + (64 if j % 2 else 0) for j in range(64)]
_FP4_PAIRS = [j // 2 + (32 if j % 2 else 0) for j in range(64)]


def _gemm_panel_scale16(p: str) -> object:
    return fill("gemm_panel_scale16.mlir").substitute(
        p=p,
        fa0="%f0",
        fa1="%f1",
        fb0="%f2",
        fb1="%f3",
        concat16=list(range(32)),
        concat32=list(range(64)),
    )


def _gemm_fp4_lookup(p: str) -> object:
    return fill("fp4_bf16_lookup.mlir").substitute(
        p=p, interleave=_FP4_INTERLEAVE, pairs=_FP4_PAIRS
    )


def _int_gemm_panel(mxfp4: bool) -> Callable[[str], object]:
    """int_gemm's panel of B's codes as stored (int_gemm._b_operands): 64 rows, K 128 (8 steps),
    nvfp4's E4M3 scales a step or mxfp4's E8M0 ones two steps."""

    def make(p: str) -> object:
        return fill("int_gemm_panel.mlir").substitute(
            p=p, w_type="memref<64x64xi8>", s_type=f"memref<64x{4 if mxfp4 else 8}xi8>", KCQ=32,
            KCB=8, R=2 if mxfp4 else 1, w_doc="",
            table=", ".join(str(v) for v in gemv.fp4_offset_table()),
        )  # fmt: skip

    return make


def _int_gemm_b_layout(p: str) -> object:
    """int_gemm's B laid out at load (int_gemm._b_operands): nvfp4's 64 rows, K 128."""
    return fill("int_gemm_b_layout.mlir").substitute(
        p=p, N=64, AK=64, NG8=8, KQ=32, KH=8, KS=8, R=1, sb_type="tensor<64x8xi8>", w_doc="",
        twice_b=snippets.e2m1_twice(f"{p}qb_"), decode_b=snippets.decode(f"{p}sbd_", E4M3),
        b_val=f"%{p}sbd_val", w_factor="0.25",
    )  # fmt: skip


def _gemm_panel_store(x: bool) -> Callable[[str], object]:
    def make(p: str) -> object:  # the GEMM's panel on the stack, or x's tiles (one tile: %t)
        dst = (
            ("%x", "memref<?x64x16xi32>", "%t, ", " %t:index")
            if x
            else ("%panel", "memref<64x16xi32>", "", "")
        )
        return fill("gemm_panel_store.mlir").substitute(
            p=p, dst=dst[0], dst_type=dst[1], lead=dst[2], lead_reads=dst[3], line=3, v="%v3"
        )

    return make


def _gemm_transpose(_: str) -> object:  # the first round: lanes exchanged one by one
    lo = [q for start in range(0, 16, 2) for q in (start, 16 + start)]
    hi = [q for start in range(0, 16, 2) for q in (start + 1, 17 + start)]
    return fill("gemm_transpose.mlir").substitute(
        a="%v0", b="%v1", lo="%t0", hi="%t1", lo_mask=lo, hi_mask=hi
    )


BLOCKED = "memref<?x2x16x16xf32>"  # a GEMM's f32 sums: a 16 x 16 block a tile and strip


def _row_sums(t: str, r: str) -> dict[str, str]:
    """As gemm._tile: row ``r``'s sums (its offset in the tile ``%<r>off``) in the block of
    tile ``t``'s prefix, as its row snippet reads them."""
    reads = f" %{t}t:index %strip:index %c0:index"
    return {"sums_type": BLOCKED, "sums_at": f"%{t}t, %strip, %{r}off, %c0", "sums_reads": reads}


def _store_at(t: str, r: str, last: str | None) -> dict[str, str]:
    """As gemm._tile: where row ``r``'s store writes: its sums' block (``last`` None), or the
    outputs (``last``: their element type), row-major at ``%<r>row``."""
    if last is None:
        sums = _row_sums(t, r)
        reads = f"{sums['sums_reads']} %{r}off:index"
        return {"what": "sums so far", "dst": "%sums", "dst_type": BLOCKED,
                "dst_at": sums["sums_at"], "dst_reads": reads}  # fmt: skip
    return {"what": "outputs (row-major)", "dst": "%out", "dst_type": f"memref<?x32x{last}>",
            "dst_at": f"%{r}row, %n", "dst_reads": f" %{r}row:index %n:index"}  # fmt: skip


def _gemm_row(tail: bool) -> Callable[[str], object]:
    def make(p: str) -> object:
        file = "gemm_row_tail.mlir" if tail else "gemm_row.mlir"
        return fill(file).substitute(p=p, tile0="%tile0", N=32, i=3, **_row_sums("q_", p))

    return make


def _gemm_store(tail: bool, last: str | None) -> Callable[[str], object]:
    def make(p: str) -> object:  # row 3's store, its row index %r3_row, its offset %r3_off
        guard = {"in": "%in3"} if tail else {}
        file = "gemm_store_tail.mlir" if tail else "gemm_store.mlir"
        return fill(file).substitute(
            p=p, acc="%a3", N=32, i=3, **guard, **_store_at("q_", "r3_", last)
        )

    return make


def _gemm_tile(
    tail: bool, rounded: bool = False, prepacked: bool = False
) -> Callable[[str], object]:
    def make(p: str) -> object:  # as gemm._tile: 16 rows of x [?, 64, 16] against a panel of 64
        suffix = "_tail" if tail else ""
        rows, products, stores, last = [], [], [], []
        for i in range(16):
            r = f"{p}r{i}_"
            rows.append(
                fill(f"gemm_row{suffix}.mlir").substitute(
                    p=r, tile0="%tile0", N=32, i=i, **_row_sums(p, r)
                )
            )
            products.append(
                fill("gemm_products.mlir").substitute(
                    p=f"{p}x{i}_",
                    KH=64,
                    i=i,
                    t=f"%{p}t",
                    kp=f"%{p}kp",
                    wv=f"%{p}wv",
                    acc=f"%{p}acc_{i}",
                )
            )
            row = {"acc": f"%{p}acc#{i}", "N": 32, "i": i}
            if tail:
                row["in"] = f"%{r}in"
            store = fill(f"gemm_store{suffix}.mlir")
            stores.append(store.substitute(p=f"{p}o{i}_", **row, **_store_at(p, r, None)))
            if not rounded:  # the f32 sums into the outputs
                last.append(store.substitute(p=f"{p}h{i}_", **row, **_store_at(p, r, "f32")))
                continue
            # rounded (with per-tensor scales): the sums times alpha, rounded and stored as bf16
            acc = row.pop("acc")
            last.append(fill("gemm_acc_alpha.mlir").substitute(p=f"{p}s{i}_", acc=acc))
            last.append(
                fill(f"gemm_store_bf16{suffix}.mlir").substitute(
                    p=f"{p}h{i}_", v=f"%{p}s{i}_scaled", row=f"%{r}row", **row
                )
            )
        out = (
            " %out:memref<?x32xbf16> %alpha:vector<16xf32>" if rounded else " %out:memref<?x32xf32>"
        )
        text = _gemm_stores_last(f"{p}st_", last, stores, f"{out} %sums:{BLOCKED} %n:index")
        return fill("gemm_tile.mlir").substitute(
            p=p,
            tile0="%tile0",
            panel="%w" if prepacked else "%panel",
            panel_type="memref<2x64x16xi32>" if prepacked else "memref<64x16xi32>",
            panel_at=f"%strip, %{p}kp, %c0" if prepacked else f"%{p}p, %c0",
            N=32,
            KH=64,
            KP=64,
            row_reads=(" %m:index %m_last:index" if tail else "") + " %strip:index",
            store_reads=out,
            sums_type=BLOCKED,
            rows="\n".join(rows),
            iter_args=", ".join(f"%{p}acc_{i} = %{p}r{i}_init" for i in range(16)),
            acc_types=", ".join(["vector<16xf32>"] * 16),
            products="\n".join(products),
            yields=", ".join(f"%{p}x{i}_next" for i in range(16)),
            stores=str(text),
        )

    return make


def _gemm_stores_last(p: str, last: list[str], sums: list[str], reads: str) -> object:
    """As gemm._tile: the outputs' stores at the last block of K (K 128 in blocks of 64), the
    f32 sums' before it (``reads``: the values they read)."""
    return fill("gemm_stores_last.mlir").substitute(
        p=p,
        k_last=64,
        store_reads=reads,
        last_doc="times alpha, rounded to bf16",
        last="\n".join(str(s) for s in last),
        sums="\n".join(str(s) for s in sums),
    )


def _gemm_stores_last_case(p: str) -> object:  # one row's stores of each kind
    rounded = fill("gemm_store_bf16.mlir").substitute(p=f"{p}h_", v="%a3", row="%r3_row", N=32)
    sums = fill("gemm_store.mlir").substitute(
        p=f"{p}o_", acc="%a3", i=3, **_store_at("q_", "r3_", None)
    )
    reads = (
        f" %out:memref<?x32xbf16> %sums:{BLOCKED} %n:index %a3:vector<16xf32> %r3_row:index"
        " %q_t:index %strip:index %c0:index %r3_off:index"
    )
    return _gemm_stores_last(p, [str(rounded)], [str(sums)], reads)


def _gemv_scales(scale_format: str) -> Callable[[str], object]:
    def make(_: str) -> object:
        if scale_format == "fp32":
            return fill("gemv_scales_fp32.mlir").substitute(
                KB=2, RB=4, WKB=4, rb=128, sa_type="tensor<2x4xf32>", sb_type="tensor<4x4xf32>"
            )

        def unswizzled(p: str, swizzled: str, rows: int) -> str:  # as swizzle.unswizzle
            offset = fill("mx_offset.mlir").substitute(
                out=f"{p}off", row=f"%{p}r", col=f"%{p}c", col_tiles=2
            )
            return fill("unswizzle_mx.mlir").substitute(
                p=p,
                swizzled=swizzled,
                swizzled_type="tensor<4096xi8>",
                rows=rows,
                rows_empty="",
                cols=8,
                offset=offset,
            )

        return fill("gemv_scales_e8m0.mlir").substitute(
            KB=8,
            RB=512,
            WKB=8,
            sa_type="tensor<4096xi8>",
            sb_type="tensor<4096xi8>",
            unswizzle_a=unswizzled("a_", "%sa", 1),
            unswizzle_b=unswizzled("b_", "%sb", 512),
            decode_x=fill("decode_e8m0_f32.mlir").substitute(p="x_", code="%x_code"),
        )

    return make


def _gemv_fp4_activation(x_elem: str, e8m0: bool = False) -> Callable[[str], object]:
    """nvfp4's A as AVX-512's x (bf16) or AVX2's (i8, times 2; scales times 2^8 / 4); mxfp4's
    (``e8m0``: AVX2, its E8M0 scales times a quarter), as gemv.lower_gemv and _lower_mxfp4."""

    def make(p: str) -> object:
        to_x = fill(f"gemv_x_{x_elem}.mlir").substitute(p=p, val=f"%{p}fp4")
        factor = 0.25 if e8m0 else 64.0 if x_elem == "i8" else 1.0
        decode_scale = (
            fill("decode_e8m0_f32.mlir").substitute(p=f"{p}s_", code=f"%{p}s_code")
            if e8m0
            else snippets.decode(f"{p}s_", E4M3)
        )
        return fill("gemv_fp4_activation.mlir").substitute(
            p=p, a_shape="1x64", a_dims="0, 1", K=64, XK=128, KB=8, x_elem=x_elem, to_x=to_x,
            scale_factor=factor,
            decode_fp4=snippets.decode_e2m1(p, f"%{p}fp4"),
            decode_scale=decode_scale,
            s_val=f"%{p}s_f32" if e8m0 else f"%{p}s_val",
        )  # fmt: skip

    return make


def _gemv_row_tail(p: str) -> object:  # mxfp8's last K blocks (10 of them: 8 by vector)
    decode = fill("decode_e8m0_f32.mlir").substitute(p=f"{p}d_", code=f"%{p}tail_code")
    return fill("gemv_row_factors_e8m0_tail.mlir").substitute(
        p=p, KB=10, KB_VEC=8, RB=8, WKB=10, decode=decode
    )


def _gemv_row_factors(tail: bool) -> Callable[[str], object]:
    """mxfp8's row factors as gemv._factor_defs fills them: 8 K blocks (no tail) or 10."""

    def make(p: str) -> object:
        kb = 10 if tail else 8
        rest = str(_gemv_row_tail(p)) if tail else ""
        return fill("gemv_row_factors_e8m0.mlir").substitute(
            p=p, KB=kb, KB_VEC=8, RB=8, WKB=kb, tail=rest
        )

    return make


def _gemv_e4m3_f32(p: str) -> object:  # one half of a chunk's codes, as gemv._chunk fills it
    return fill("gemv_e4m3_f32.mlir").substitute(p=p, codes=f"%{p}codes", out=f"{p}w")


def _gemv_fp8_decode_f32(p: str) -> object:  # AVX2: a second chunk of 64 codes over [8, 128]
    return fill("gemv_fp8_decode_f32.mlir").substitute(
        p=p, N=8, K=128, offset=64, **gemv.e4m3_half_decodes(p)
    )


def _gemv_activation(x_elem: str) -> Callable[[str], object]:
    """A's row as AVX-512's x (bf16) or AVX2's (f32, times 2^8)."""

    def make(p: str) -> object:
        to_x = fill(f"gemv_x_{x_elem}.mlir").substitute(p=p, val=f"%{p}val", factor=256.0)
        return fill("gemv_activation.mlir").substitute(
            p=p, a_shape="1x128", K=128, a_dims="0, 1", decode_a=snippets.decode(p, E4M3),
            x_elem=x_elem, to_x=to_x,
        )  # fmt: skip

    return make


# case -> (the snippet file it instantiates, a maker taking the prefix)
CASES: dict[str, tuple[str, Callable[[str], object]]] = {
    "contraction_matmul": _contraction("contraction_matmul.mlir"),
    "contraction_generic": _contraction("contraction_generic.mlir"),
    "contraction_matmul_bf16": _contraction("contraction_matmul.mlir", "bf16"),
    "contraction_generic_widened": _contraction("contraction_generic_widened.mlir", "bf16"),
    "amax_rows_collapse": (  # as per_tensor.lower_amax fills it for x [2, 3, 4]
        "amax_rows_collapse.mlir",
        lambda _: fill("amax_rows_collapse.mlir").substitute(
            groups="[0, 1], [2]", shape="2x3x4", view="6x4"
        ),
    ),
    "amax_block_rows_bits": (
        "amax_block_rows_bits.mlir",  # as block_amax.block_rows_bits(Dim(4), 64, 32), untiled
        lambda p: fill("amax_block_rows_bits.mlir").substitute(
            p=p,
            M=4,
            K=64,
            Kb=2,
            bk=32,
            N=256,
            R=8,
            R_size=8,
            r_empty="",
            M_size=4,
            tiling="",
            **block_amax.nan_fields(False),
        ),
    ),
    "decode_e2m1": ("decode_e2m1.mlir", lambda p: snippets.decode_e2m1(p, f"%{p}fp4")),
    "decode_e2m1_code": ("decode_e2m1_code.mlir", lambda p: snippets.decode_value(E2M1, p)),
    "e2m1_twice_i8": ("e2m1_twice_i8.mlir", snippets.e2m1_twice),
    "decode_e8m0_f64": ("decode_e8m0_f64.mlir", lambda _: snippets.decode_scale_f64("e8m0")),
    "decode_fp8": ("decode_fp8.mlir", lambda p: snippets.decode(p, E4M3)),
    "decode_e5m2": ("decode_e5m2.mlir", lambda p: snippets.decode(p, E5M2)),
    "decode_scale_f64[e8m0]": (
        "decode_scale_f64.mlir",
        lambda _: snippets.decode_scale_f64("e8m0"),
    ),
    "decode_scale_f64[e4m3]": (
        "decode_scale_f64.mlir",
        lambda _: snippets.decode_scale_f64("e4m3"),
    ),
    "block_decode_index": ("block_decode_index.mlir", _block_decode(False)),
    "block_decode_view": ("block_decode_view.mlir", _block_decode(True)),
    "block_decode_split": ("block_decode_split.mlir", _block_decode_split),
    "block_decode_tail": ("block_decode_tail.mlir", _block_decode_tail),
    "block_quantize_index": ("block_quantize_index.mlir", _block_quantize("index")),
    "block_quantize_split": ("block_quantize_split.mlir", _block_quantize("split")),
    "block_quantize_tail": ("block_quantize_tail.mlir", _block_quantize("tail")),
    "block_quantize_tiles": ("block_quantize_tiles.mlir", _block_quantize("tiles")),
    "block_quantize_view": ("block_quantize_view.mlir", _block_quantize("view")),
    "block_scale_index": ("block_scale_index.mlir", _block_scale_index),
    "block_scales_rows": (  # as block_matmul._decode slices 3 rows' scales of 2 K blocks
        "block_scales_rows.mlir",
        lambda p: fill("block_scales_rows.mlir").substitute(
            p=p,
            scales="%a0",
            scale_type="tensor<2x4xf32>",
            grid_type="tensor<2x3xf32>",
            kb=2,
            rows=3,
        ),
    ),
    "dequant_block_e8m0": ("dequant_block_e8m0.mlir", _dequant_block_e8m0),
    "dequant_block_fp32": ("dequant_block_fp32.mlir", _dequant_block_fp32),
    "dequant_fp4_blocks": ("dequant_fp4_blocks.mlir", _dequant_fp4_blocks),
    "dequant_nvfp4": ("dequant_nvfp4.mlir", _dequant_nvfp4),
    "dequant_mxfp4": ("dequant_mxfp4.mlir", _dequant_mxfp4),
    "e8m0_rule_ceil": _e8m0_rule("ceil"),
    "e8m0_rule_cudnn_e4m3_round_up": _e8m0_rule("cudnn_e4m3_round_up"),
    "e8m0_rule_cudnn_round_up": _e8m0_rule("cudnn_round_up"),
    "e8m0_rule_floor": _e8m0_rule("floor"),
    "e8m0_rule_rne": _e8m0_rule("rne"),
    "e8m0_rule_even": _e8m0_rule("even"),
    "encode_e2m1_te": (
        "encode_e2m1_te.mlir",
        lambda p: snippets.encode_e2m1_te(x="%a0", prefix=p),
    ),
    "encode_fp8[e4m3]": _encode("e4m3"),
    "encode_fp8[e5m2]": _encode("e5m2"),
    "encode_fp8[e2m1]": _encode("e2m1"),
    "f32_from_f64": ("f32_from_f64.mlir", lambda p: snippets.f32_from_f64(p, "%a0")),
    "f64_from_f32": ("f64_from_f32.mlir", lambda p: snippets.f64_from_f32(p, "%a0")),
    "ldexp_f32": ("ldexp_f32.mlir", lambda p: snippets.ldexp(p, "%a0", "%a1")),
    "mx_offset": ("mx_offset.mlir", _mx_offset),
    "quantize_e8m0_element": ("quantize_e8m0_element.mlir", _quantize_e8m0_element),
    "nvfp4_block_lookup": (  # nvfp4.lower_nvfp4_quantize passes code="%block_code"
        "nvfp4_block_lookup.mlir",
        lambda _: fill("nvfp4_block_lookup.mlir").substitute(code="%a0"),
    ),
    "nvfp4_block_table[te]": ("nvfp4_block_table.mlir", lambda _: _nvfp4_block_table("te")),
    "nvfp4_block_table[torchao]": (
        "nvfp4_block_table.mlir",
        lambda _: _nvfp4_block_table("torchao"),
    ),
    "nvfp4_enc_te": ("nvfp4_enc_te.mlir", lambda _: _nvfp4_enc("te")),
    "nvfp4_enc_torchao": ("nvfp4_enc_torchao.mlir", lambda _: _nvfp4_enc("torchao")),
    "reciprocal_f32": ("reciprocal_f32.mlir", lambda _: snippets.reciprocal()),
    "unswizzle_mx": ("unswizzle_mx.mlir", _unswizzle_mx),
    "unswizzle_mx_row": (  # as swizzle.unswizzle fills it for one row of 7 scales
        "unswizzle_mx_row.mlir",
        lambda p: fill("unswizzle_mx_row.mlir").substitute(
            p=p,
            swizzled="%a0",
            swizzled_type="tensor<1024xi8>",
            cols=7,
            col_tiles=2,
            padded_cols=8,
        ),  # fmt: skip
    ),
    "gemv_fp8_decode": _gemv("gemv_fp8_decode.mlir"),
    "gemv_accumulate": _gemv("gemv_accumulate.mlir"),
    "gemv_accumulate_f32": _gemv("gemv_accumulate_f32.mlir"),
    "gemv_products_bf16": _gemv("gemv_products_bf16.mlir"),
    "gemv_defs_bf16_tables": _gemv("gemv_defs_bf16_tables.mlir"),
    "gemv_defs_f32": _gemv("gemv_defs_f32.mlir"),
    "gemv_scales_times": _gemv("gemv_scales_times.mlir"),
    "decode_attention_row_bf16": _gemv("decode_attention_row_bf16.mlir"),
    "fp8_bf16_lookup": _gemm("fp8_bf16_lookup.mlir"),
    "gemm_w_rows": _gemm("gemm_w_rows.mlir"),
    "gemm_x_rows": _gemm("gemm_x_rows.mlir"),
    "gemm_row": ("gemm_row.mlir", _gemm_row(False)),
    "gemm_row_tail": ("gemm_row_tail.mlir", _gemm_row(True)),
    "gemm_products": _gemm("gemm_products.mlir"),
    "gemm_store": ("gemm_store.mlir", _gemm_store(False, None)),
    "gemm_store_tail": ("gemm_store_tail.mlir", _gemm_store(True, None)),
    "gemm_store_out": ("gemm_store.mlir", _gemm_store(False, "f32")),
    "gemm_store_tail_out": ("gemm_store_tail.mlir", _gemm_store(True, "f32")),
    "gemm_rows_2d": _gemm("gemm_rows_2d.mlir"),
    "gemm_bf16_rows": _gemm("gemm_bf16_rows.mlir"),
    "gemm_prefetch_line": _gemm("gemm_prefetch_line.mlir"),
    "gemm_prefetch": ("gemm_prefetch.mlir", _gemm_prefetch),
    "gemm_out_2d": _gemm("gemm_out_2d.mlir"),
    "gemm_collapse": _gemm("gemm_collapse.mlir"),
    "gemm_expand": _gemm("gemm_expand.mlir"),
    "gemm_panel_rows": ("gemm_panel_rows.mlir", _gemm_panel_rows(None)),
    "gemm_panel_rows_fp32": ("gemm_panel_rows.mlir", _gemm_panel_rows("fp32")),
    "gemm_panel_rows_e8m0": ("gemm_panel_rows.mlir", _gemm_panel_rows("e8m0")),
    "gemm_panel_scale": ("gemm_panel_scale.mlir", _gemm_panel_scale),
    "gemm_panel_rows_nvfp4": ("gemm_panel_rows.mlir", _gemm_panel_rows("nvfp4")),
    "gemm_panel_round": ("gemm_panel_round.mlir", _gemm_panel_round),
    "gemm_scale_e4m3_decoded": ("gemm_scale_e4m3_decoded.mlir", _gemm_scale_decoded("e4m3")),
    "gemm_scale_e8m0_decoded": ("gemm_scale_e8m0_decoded.mlir", _gemm_scale_decoded("e8m0")),
    "gemm_scales_rows_e4m3": ("gemm_scales_rows.mlir", _gemm_scales_rows("e4m3")),
    "gemm_scales_rows_e8m0": ("gemm_scales_rows.mlir", _gemm_scales_rows("e8m0")),
    "gemm_scales_e4m3": ("gemm_scales_e4m3.mlir", _gemm_scales_decode("e4m3")),
    "gemm_scales_e8m0": ("gemm_scales_e8m0.mlir", _gemm_scales_decode("e8m0")),
    "gemm_scales_decoded": _gemm("gemm_scales_decoded.mlir"),
    "gemm_panel_scale16": ("gemm_panel_scale16.mlir", _gemm_panel_scale16),
    "fp4_bf16_lookup": ("fp4_bf16_lookup.mlir", _gemm_fp4_lookup),
    "gemm_scale_fp32": ("gemm_scale_fp32.mlir", _gemm_scale_fp32),
    "gemm_alpha": _gemm("gemm_alpha.mlir"),
    "gemm_alpha_one": _gemm("gemm_alpha_one.mlir"),
    "gemm_block_scales": _gemm("gemm_block_scales.mlir"),
    "gemm_x_scales": _gemm("gemm_x_scales.mlir"),
    "gemm_panel_store": ("gemm_panel_store.mlir", _gemm_panel_store(False)),
    "gemm_panel_store_x": ("gemm_panel_store.mlir", _gemm_panel_store(True)),
    "gemm_transpose": ("gemm_transpose.mlir", _gemm_transpose),
    "gemm_tile": ("gemm_tile.mlir", _gemm_tile(False)),
    "gemm_tile_tail": ("gemm_tile.mlir", _gemm_tile(True)),
    "gemm_tile_rounded": ("gemm_tile.mlir", _gemm_tile(False, rounded=True)),
    "gemm_tile_tail_rounded": ("gemm_tile.mlir", _gemm_tile(True, rounded=True)),
    # dynamic-gemm's: the panel a view of B stored as its panels
    "gemm_tile_prepacked": ("gemm_tile.mlir", _gemm_tile(False, prepacked=True)),
    "int_gemm_panel": ("int_gemm_panel.mlir", _int_gemm_panel(False)),
    "int_gemm_panel_mxfp4": ("int_gemm_panel.mlir", _int_gemm_panel(True)),
    "int_gemm_b_layout": ("int_gemm_b_layout.mlir", _int_gemm_b_layout),
    "gemm_panel_build": (
        "gemm_panel_build.mlir",
        lambda _: fill("gemm_panel_build.mlir").substitute(panel_scales="", panel=""),
    ),
    "gemm_b_panels": (
        "gemm_b_panels.mlir",
        lambda _: fill("gemm_b_panels.mlir").substitute(N=64, K=128, S=4, KH=64),
    ),
    "gemm_stores_last": ("gemm_stores_last.mlir", _gemm_stores_last_case),
    "gemm_store_bf16": _gemm("gemm_store_bf16.mlir"),
    "gemm_store_bf16_tail": _gemm("gemm_store_bf16_tail.mlir"),
    "gemm_acc_alpha": _gemm("gemm_acc_alpha.mlir"),
    "gemm_round_alpha": _gemm("gemm_round_alpha.mlir"),
    "prefill_attention_fma": _prefill("prefill_attention_fma.mlir"),
    "prefill_attention_tile_store": _prefill("prefill_attention_tile_store.mlir"),
    "prefill_attention_row": _prefill("prefill_attention_row.mlir"),
    "prefill_attention_max_half": _prefill("prefill_attention_max_half.mlir"),
    "prefill_attention_softmax": _prefill("prefill_attention_softmax.mlir"),
    "prefill_attention_dot": _prefill("prefill_attention_dot.mlir"),
    "prefill_attention_q_f32": _prefill("prefill_attention_q_f32.mlir"),
    "prefill_attention_q_pairs": _prefill("prefill_attention_q_pairs.mlir"),
    "prefill_attention_kt_f32": _prefill("prefill_attention_kt_f32.mlir"),
    "prefill_attention_kt_pairs": _prefill("prefill_attention_kt_pairs.mlir"),
    "prefill_attention_q_as_is": _prefill("prefill_attention_q_as_is.mlir"),
    "prefill_attention_q_bf16": _prefill("prefill_attention_q_bf16.mlir"),
    "prefill_attention_pv": _prefill("prefill_attention_pv.mlir"),
    "prefill_attention_row_store": _prefill("prefill_attention_row_store.mlir"),
    "decode_attention_row_f32": _gemv("decode_attention_row_f32.mlir"),
    "gemv_restore_mxcsr": _gemv("gemv_restore_mxcsr.mlir"),
    "gemv_e4m3_f32": ("gemv_e4m3_f32.mlir", _gemv_e4m3_f32),
    "gemv_fp8_decode_f32": ("gemv_fp8_decode_f32.mlir", _gemv_fp8_decode_f32),
    "gemv_x_bf16": _gemv("gemv_x_bf16.mlir"),
    "gemv_x_f32": _gemv("gemv_x_f32.mlir"),
    "gemv_activation": ("gemv_activation.mlir", _gemv_activation("bf16")),
    "gemv_activation_f32": ("gemv_activation.mlir", _gemv_activation("f32")),
    "gemv_fp4_activation": ("gemv_fp4_activation.mlir", _gemv_fp4_activation("bf16")),
    "gemv_fp4_activation_i8": ("gemv_fp4_activation.mlir", _gemv_fp4_activation("i8")),
    "gemv_mxfp4_activation": ("gemv_fp4_activation.mlir", _gemv_fp4_activation("i8", True)),
    "gemv_mxfp4_scales_i8": _gemv("gemv_mxfp4_scales_i8.mlir"),
    "gemv_accumulate_mxfp4_i8": _gemv("gemv_accumulate_mxfp4_i8.mlir"),
    "gemv_defs_mxfp4": _gemv("gemv_defs_mxfp4.mlir"),
    "gemv_fp4_decode_i8": _gemv("gemv_fp4_decode_i8.mlir"),
    "gemv_fp4_offsets": _gemv("gemv_fp4_offsets.mlir"),
    "gemv_accumulate_fp4_i8": _gemv("gemv_accumulate_fp4_i8.mlir"),
    "gemv_x_i8": _gemv("gemv_x_i8.mlir"),
    "gemv_nan_rows": _gemv("gemv_nan_rows.mlir"),
    "gemv_fp4_scales_f16": _gemv("gemv_fp4_scales_f16.mlir"),
    "gemv_products_f32_blocks": _gemv("gemv_products_f32_blocks.mlir"),
    "gemv_defs_factors": _gemv("gemv_defs_factors.mlir"),
    "gemv_block_factors": _gemv("gemv_block_factors.mlir"),
    "gemv_accumulate_factors": _gemv("gemv_accumulate_factors.mlir"),
    "gemv_row_factors_e8m0": ("gemv_row_factors_e8m0.mlir", _gemv_row_factors(False)),
    "gemv_row_factors_e8m0_tail": ("gemv_row_factors_e8m0.mlir", _gemv_row_factors(True)),
    "gemv_row_factors_e8m0_tail_only": ("gemv_row_factors_e8m0_tail.mlir", _gemv_row_tail),
    "gemv_prefetch_defs": _gemv("gemv_prefetch_defs.mlir"),
    "gemv_prefetch": _gemv("gemv_prefetch.mlir"),
    "gemv_accumulate_scaled_block": _gemv("gemv_accumulate_scaled_block.mlir"),
    "gemv_fp4_scales": _gemv("gemv_fp4_scales.mlir"),
    "gemv_defs_fp4_tables": _gemv("gemv_defs_fp4_tables.mlir"),
    "gemv_defs_fp4_i8": _gemv("gemv_defs_fp4_i8.mlir"),
    "gemv_fp4_decode": _gemv("gemv_fp4_decode.mlir"),
    "gemv_accumulate_fp4": _gemv("gemv_accumulate_fp4.mlir"),
    "gemv_defs_block": _gemv("gemv_defs_block.mlir"),
    "gemv_defs_fp4": _gemv("gemv_defs_fp4.mlir"),
    "gemv_scales_fp32": ("gemv_scales_fp32.mlir", _gemv_scales("fp32")),
    "gemv_alpha_rows": (  # as gemv.lower_gemv fills it for fp8-rowwise's
        "gemv_alpha_rows.mlir",
        lambda _: fill("gemv_alpha_rows.mlir").substitute(
            N=64,
            out_shape="1x64",
            out_dims="0, 1",
            out_sizes="1, 64",
            sa_type="tensor<1x4xf32>",
            sb_type="tensor<1x64xf32>",
        ),
    ),
    "gemv_alpha": (  # as gemv.lower_gemv fills it for per-tensor scales
        "gemv_alpha.mlir",
        lambda _: fill("gemv_alpha.mlir").substitute(
            N=64, out_shape="1x64", out_dims="0, 1", out_sizes="1, 64", sa="%a0", sb="%a1"
        ),
    ),
    "gemv_scales_e8m0": ("gemv_scales_e8m0.mlir", _gemv_scales("e8m0")),
    "decode_e8m0_f32": (
        "decode_e8m0_f32.mlir",
        lambda p: fill("decode_e8m0_f32.mlir").substitute(p=p, code="%a0"),
    ),
}
PREFIXED = [case for case, (file, _) in CASES.items() if prefix_field(file) is not None]


# ---------------------------------------------------------------------------------------------
# the checkers


def wrap(text: str, iface: Interface, context: str = "func") -> str:
    """``text`` in ``func.func @snippet(<reads>) -> (<defines' types>)`` returning the defines
    ("func"), or in a 2-D ``linalg.generic`` body yielding them ("body")."""
    args: list[str] = []
    prologue: list[str] = []
    groups: dict[str, dict[int, str]] = {}
    for value, type_ in iface.reads:
        name, _, index = value.partition("#")
        if index:  # one result of a multi-result value: cast from arguments below
            groups.setdefault(name, {})[int(index)] = type_
        else:
            args.append(f"{value}: {type_}")
    for name, parts in groups.items():
        assert sorted(parts) == list(range(len(parts))), f"{name}: reads {sorted(parts)}"
        types = ", ".join(parts[i] for i in range(len(parts)))
        sources = [f"%wrap_{name[1:]}{i}" for i in range(len(parts))]
        args += [f"{s}: {parts[i]}" for i, s in enumerate(sources)]
        prologue.append(
            f"  {name}:{len(parts)} = builtin.unrealized_conversion_cast {', '.join(sources)}"
            f" : {types} to {types}"
        )
    values = ", ".join(v for v, _ in iface.defines)
    types = [t for _, t in iface.defines]
    head = f"func.func @snippet({', '.join(args)})"
    if context == "func":
        ret = f"  return {values} : {', '.join(types)}" if values else "  return"
        return "\n".join([f"{head} -> ({', '.join(types)}) {{", *prologue, text, ret, "}"])
    assert context == "body" and values, context
    n = len(types)
    tensors = ", ".join(f"tensor<2x2x{t}>" for t in types)
    ident = "affine_map<(d0, d1) -> (d0, d1)>"
    inits = ", ".join(f"%wrap_init{i}" for i in range(n))
    return "\n".join(
        [
            f"{head} -> ({tensors}) {{",
            *prologue,
            *(f"  %wrap_init{i} = tensor.empty() : tensor<2x2x{t}>" for i, t in enumerate(types)),
            f"  %wrap_out:{n} = linalg.generic {{indexing_maps = [{', '.join([ident] * n)}],",
            '      iterator_types = ["parallel", "parallel"]}',
            f"      outs({inits} : {tensors}) {{",
            f"  ^bb0({', '.join(f'%wrap_o{i}: {t}' for i, t in enumerate(types))}):",
            text,
            f"    linalg.yield {values} : {', '.join(types)}",
            f"  }} -> ({tensors})",
            f"  return {', '.join(f'%wrap_out#{i}' for i in range(n))} : {tensors}",
            "}",
        ]
    )


def parse_error(text: str) -> str | None:
    """None if ``text`` parses and verifies as a module, else the diagnostic."""
    with ir.Context():
        try:
            ir.Module.parse(text)
        except ir.MLIRError as e:
            return str(e)
    return None


def hygiene_problems(inst: Instance) -> list[str]:
    """What is wrong with ``inst``'s names against its declared interface (empty: nothing).

    Its own definitions (those of its text less those of its ``parts``, which are checked the
    same way against their own interfaces) must start with its prefix or be declared (defines,
    locals), its own fixed ones being exactly the declared fixed ones no part defines; every
    declared name must be defined, every declared read used, and what its own text uses of a
    part's names must be among that part's defines."""
    iface = inst.interface
    problems = [f"part {p.file} is not in the text" for p in inst.parts if p.text not in inst.text]
    for part in inst.parts:
        problems += [f"{part.file}: {problem}" for problem in hygiene_problems(part)]
    every = definitions(inst.text)
    by_parts = sum((definitions(part.text) for part in inst.parts), Counter())
    own = set(every - by_parts)
    declared = {base(v) for v, _ in iface.defines} | {base(v) for v in iface.locals}

    def fixed(names: set[str]) -> set[str]:
        return {n for n in names if not (inst.prefix and n.startswith(inst.prefix))}

    prefix = f"with {inst.prefix!r}" if inst.prefix else "(no prefix)"
    for name in sorted(fixed(own) - declared):
        problems.append(f"defines %{name}: neither prefixed {prefix} nor declared")
    for name in sorted(declared - set(every)):
        problems.append(f"declares %{name} but does not define it")
    if not problems:  # the same, as one equation
        assert fixed(own) == fixed(declared) - set(by_parts)
    for name, count in result_groups(inst.text).items():
        indices = {int(v.split("#")[1]) for v, _ in iface.defines if "#" in v and base(v) == name}
        if indices and indices != set(range(count)):
            problems.append(f"defines %{name}:{count} but declares %{name}#{sorted(indices)}")
    for value, _ in iface.reads:
        if base(value) in every:
            problems.append(f"reads {value}, which it defines")
        if not uses(inst.text, value):
            problems.append(f"declares the read {value} but does not use it")
    own_text = inst.text
    for part in inst.parts:
        own_text = own_text.replace(part.text, "", 1)
    own_uses = {base(v) for v in re.findall(SSA, strip_comments(own_text))}
    for part in inst.parts:  # what it takes from a nested snippet, that one declares
        results = {base(v) for v, _ in part.interface.defines}
        for name in sorted(own_uses & set(definitions(part.text)) - results):
            problems.append(f"uses %{name} of {part.file}, which does not declare it")
    return problems


def combined(one: Interface, two: Interface) -> Interface:
    """Two instances one after the other: the reads of both (the same value once), both defines."""
    reads = dict(one.reads)
    for value, type_ in two.reads:
        assert reads.setdefault(value, type_) == type_, value
    return Interface(tuple(reads.items()), one.defines + two.defines)


# ---------------------------------------------------------------------------------------------
# the snippet files


def test_every_snippet_file_has_a_case() -> None:
    assert {file for file, _ in CASES.values()} == set(snippet_files())
    assert len(snippet_files()) >= 26


@pytest.mark.parametrize("file", snippet_files())
def test_first_line_declares_the_interface(file: str) -> None:
    first, rest = raw_text(file).split("\n", 1)
    iface = parse_interface(first)
    assert "// snippet:" not in rest, "one interface line, the first"
    assert "// snippet:" not in template(file).template, "common.template drops it"
    # holes: the fields alone on a line, which take other snippets' text
    assert set(iface.holes) == set(re.findall(r"^\$\{(\w+)\}$", rest, re.M))
    assert fields_of(first) <= fields_of(rest), "the line takes its template's fields only"


@pytest.mark.parametrize("case", CASES)
def test_instance_parses_with_its_interface(case: str) -> None:
    inst = build(case, "t_")
    wrapped = wrap(inst.text, inst.interface, inst.context)
    error = parse_error(wrapped)
    assert error is None, f"{error}\n{wrapped}"


@pytest.mark.parametrize("case", CASES)
def test_instance_names_are_hygienic(case: str) -> None:
    inst = build(case, "t_")
    assert inst.prefix in (None, "t_", "t_off")
    assert hygiene_problems(inst) == []


@pytest.mark.parametrize("case", PREFIXED)
def test_two_prefixed_instances_do_not_collide(case: str) -> None:
    one, two = build(case, "t_"), build(case, "u_")
    assert one.prefix != two.prefix
    wrapped = wrap(f"{one.text}\n{two.text}", combined(one.interface, two.interface), one.context)
    error = parse_error(wrapped)
    assert error is None, f"{error}\n{wrapped}"


def test_definition_templates_read_only_declared_defines() -> None:
    """A value a definition template uses from its snippets is one they declare as defined
    (``%${p}zero`` matching ``%blk_zero``, a field standing for any name; a define that is a
    field alone, such as decode_e2m1's ``${out}``, matches nothing here)."""
    declared = [
        re.compile("".join(r"%?[\w.$-]*" if s.startswith("${") else re.escape(s) for s in parts))
        for file in snippet_files()
        for value, _ in parse_interface(interface_line(file)).defines
        for parts in [re.split(r"(\$\{\w+\})", value)]
        if re.sub(r"\$\{\w+\}|%", "", value)  # some literal part
    ]
    assert len(declared) > 20
    undeclared = {}
    for path in sorted(TEMPLATES.glob("*.mlir")):
        code = strip_comments(path.read_text())
        if "func.func" not in code:
            continue
        defined = set(definitions(code))
        for args in FUNC_ARGS.finditer(code):
            defined |= {base(a) for a in ARG.findall(args[1])}
        for value in sorted(set(re.findall(SSA, code)) - {"%$"}):
            name = f"%{base(value)}"
            if base(value) not in defined and not any(p.fullmatch(name) for p in declared):
                undeclared.setdefault(path.name, []).append(name)
    assert undeclared == {}


# ---------------------------------------------------------------------------------------------
# the checkers reject what they should

SYNTHETIC_LINE = "    // snippet: reads ${x}:f32 %s:f32; defines %${p}y:f32 %two:f32"
SYNTHETIC = """\
    %two = arith.constant 2.0 : f32
    %${p}t = arith.mulf ${x}, %two : f32
    %${p}y = arith.addf %${p}t, %s : f32
"""


def synthetic(body: str = SYNTHETIC, line: str = SYNTHETIC_LINE, p: str = "t_") -> Instance:
    fields = {"p": p, "x": "%a0"}
    iface = parse_interface(string.Template(line).substitute(fields))
    return Instance("synthetic", string.Template(body).substitute(fields), iface, p or None)


def test_a_well_formed_synthetic_snippet_passes() -> None:
    inst = synthetic()
    assert hygiene_problems(inst) == []
    assert parse_error(wrap(inst.text, inst.interface)) is None


def test_an_undeclared_fixed_definition_is_rejected() -> None:
    inst = synthetic(SYNTHETIC + "    %oops = arith.constant 0 : i32\n")
    assert hygiene_problems(inst) == ["defines %oops: neither prefixed with 't_' nor declared"]
    # with no prefix, every name it defines is a fixed one
    assert "defines %t: neither prefixed (no prefix) nor declared" in hygiene_problems(
        synthetic(p="")
    )
    # a real snippet copy, in memory: encode_fp8.mlir with one fixed name more
    inst = build("encode_fp8[e4m3]", "t_")
    broken = Instance(
        inst.file, inst.text + "    %scratch = arith.constant 1 : i8\n", inst.interface, "t_"
    )
    assert hygiene_problems(broken) == ["defines %scratch: neither prefixed with 't_' nor declared"]


def test_an_undeclared_block_argument_and_region_local_are_rejected() -> None:
    line = "  // snippet: reads %x:tensor<4xf32>; defines %${p}r:tensor<4xf32>"
    region = """\
  %${p}r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]} outs(%x : tensor<4xf32>) {
  ^bb0(%v: f32):
    %w = arith.addf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<4xf32>
"""
    inst = synthetic(region, line)
    assert parse_error(wrap(inst.text, inst.interface)) is None  # it parses: hygiene sees it
    assert hygiene_problems(inst) == [
        "defines %v: neither prefixed with 't_' nor declared",
        "defines %w: neither prefixed with 't_' nor declared",
    ]
    assert hygiene_problems(synthetic(region, line + "; locals %v %w")) == []


def test_a_declared_value_it_does_not_define_is_rejected() -> None:
    inst = synthetic(line=SYNTHETIC_LINE + " %ghost:f32")
    assert hygiene_problems(inst) == ["declares %ghost but does not define it"]
    assert "use of undeclared SSA value name" in (
        parse_error(wrap(inst.text, inst.interface)) or ""
    )
    local = synthetic(line=SYNTHETIC_LINE + "; locals %gone")
    assert hygiene_problems(local) == ["declares %gone but does not define it"]


def test_a_multi_result_value_is_declared_whole() -> None:
    line = "  // snippet: reads %a:f32; defines %m#0:f32 %m#1:f32"
    body = "  %m:3 = builtin.unrealized_conversion_cast %a : f32 to f32, f32, f32\n"
    assert hygiene_problems(synthetic(body, line)) == ["defines %m:3 but declares %m#[0, 1]"]
    assert hygiene_problems(synthetic(body, line + " %m#2:f32")) == []


def test_an_undeclared_read_fails_to_parse() -> None:
    inst = synthetic(SYNTHETIC.replace("%${p}t, %s", "%${p}t, %undeclared"))
    assert "use of undeclared SSA value name" in (
        parse_error(wrap(inst.text, inst.interface)) or ""
    )
    assert hygiene_problems(inst) == ["declares the read %s but does not use it"]


def test_a_read_it_also_defines_is_rejected() -> None:
    inst = synthetic(line=SYNTHETIC_LINE.replace("%s:f32;", "%s:f32 %two:f32;"))
    assert hygiene_problems(inst) == ["reads %two, which it defines"]
    assert "redefinition of SSA value" in (parse_error(wrap(inst.text, inst.interface)) or "")


def test_a_missing_or_mistyped_define_fails_to_parse() -> None:
    missing = synthetic(SYNTHETIC.replace("%${p}y = arith.addf", "%${p}z = arith.addf"))
    assert parse_error(wrap(missing.text, missing.interface)) is not None
    mistyped = synthetic(line=SYNTHETIC_LINE.replace("%${p}y:f32", "%${p}y:i32"))
    assert parse_error(wrap(mistyped.text, mistyped.interface)) is not None
    body = build("dequant_block_fp32", "t_")
    wrong = Interface(body.interface.reads, (("%t_deq", "f64"),))
    assert parse_error(wrap(body.text, wrong, "body")) is not None


def test_the_same_prefix_twice_collides() -> None:
    one = build("encode_fp8[e4m3]", "t_")
    wrapped = wrap(one.text + one.text, combined(one.interface, one.interface))
    assert "redefinition of SSA value '%t_max'" in (parse_error(wrapped) or "")


def test_a_nested_snippet_is_checked_against_its_own_interface() -> None:
    inst = build("dequant_block_fp32", "t_")
    (decode,) = inst.parts
    assert decode.file == "decode_fp8.mlir" and decode.prefix == "t_"
    stale = Instance(
        inst.file, inst.text, inst.interface, inst.prefix, (build("decode_fp8", "u_"),)
    )
    assert "part decode_fp8.mlir is not in the text" in hygiene_problems(stale)
    extra = "    %t_spare = arith.constant 0 : i32\n    %spare = arith.constant 0 : i32\n"
    bad = Instance(decode.file, decode.text + extra, decode.interface, decode.prefix)
    outer = Instance(
        inst.file, inst.text.replace(decode.text, bad.text), inst.interface, "t_", (bad,)
    )
    assert hygiene_problems(outer) == [
        "decode_fp8.mlir: defines %spare: neither prefixed with 't_' nor declared"
    ]


def test_a_nested_snippet_value_it_does_not_declare_is_rejected() -> None:
    inst = build("dequant_block_e8m0", "t_")
    decode, ldexp = inst.parts
    assert (decode.file, ldexp.file) == ("decode_fp8.mlir", "ldexp_f32.mlir")
    assert hygiene_problems(inst) == []
    # the outer text reads %t_l_out, ldexp_f32's declared result; not so %t_l_mag_a
    peeking = inst.text.replace("%t_l_out : f32", "%t_l_mag_a : f32")
    assert peeking != inst.text
    assert hygiene_problems(Instance(inst.file, peeking, inst.interface, "t_", inst.parts)) == [
        "uses %t_l_mag_a of ldexp_f32.mlir, which does not declare it"
    ]


def test_an_interface_field_the_caller_does_not_pass_fails() -> None:
    fills = [Fill("decode_fp8.mlir", {"p": "t_"}, "text")]
    assert instance(fills, fills[0]).prefix == "t_"
    encode = Fill("encode_fp8.mlir", {"p": "t_"}, "text")  # its line also takes x and s
    with pytest.raises(KeyError):
        instance([encode], encode)


@pytest.mark.parametrize(
    "line",
    [
        "    // reads %x:f32; defines %y:f32",  # no "snippet:"
        "    // snippet: defines %y:f32; reads %x:f32",  # clauses out of order
        "    // snippet: reads %x:f32",  # no defines
        "    // snippet: reads %x; defines %y:f32",  # a read without its type
        "    // snippet: reads %x:f32; defines y:f32",  # not a value
        "    // snippet: reads %x:f32, %z:f32; defines %y:f32",  # commas
        "    // snippet: reads %x:f32; defines %y:f32; holes ${decode}",  # a hole is a field name
        "    // snippet: reads %x:f32; defines %y:f32; locals",  # an empty locals clause
    ],
)
def test_malformed_interface_lines_are_rejected(line: str) -> None:
    with pytest.raises(ValueError):
        parse_interface(line)


def test_the_grammar_reads_every_clause() -> None:
    line = (
        "  // snippet: reads %${p}code:i8 %table#0:tensor<256xf32>; defines; locals %v; holes a b"
    )
    assert parse_interface(line) == Interface(
        (("%${p}code", "i8"), ("%table#0", "tensor<256xf32>")), (), ("%v",), ("a", "b")
    )
