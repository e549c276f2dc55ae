"""The llvm-cpu lowering of each named op: its templates in ``templates/cpu/``, filled in.

Every function here returns the text of one ``func.func private`` definition for a declaration
the recipe pass emitted (same name, same type, same attributes).
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from functools import cache
from pathlib import Path

from iree.compiler import ir

from passes.errors import QmlirError
from passes.formats import FORMATS, FloatFormat
from passes.ir_types import TensorInfo, shape_text, tensor_info
from passes.named_ops import OP_ATTR, op_kind, symbol_name

TEMPLATES = Path(__file__).parent / "templates" / "cpu"


@cache
def template(name: str) -> string.Template:
    return string.Template((TEMPLATES / name).read_text())


def _attr_text(decl: ir.Operation) -> str:
    items = []
    for key in decl.attributes:
        name = key if isinstance(key, str) else key.name
        if name.startswith("qmlir."):
            items.append(f"{_quote(name)} = {decl.attributes[name]}")
    return ", ".join(items)


def _quote(key: str) -> str:
    return f'"{key}"'


def _str(decl: ir.Operation, key: str) -> str:
    return ir.StringAttr(decl.attributes[f"qmlir.{key}"]).value


def _bool(decl: ir.Operation, key: str) -> bool:
    return ir.BoolAttr(decl.attributes[f"qmlir.{key}"]).value


def _float(decl: ir.Operation, key: str) -> float:
    return ir.FloatAttr(decl.attributes[f"qmlir.{key}"]).value


def _f32_literal(value: float) -> str:
    import struct

    return "0x" + struct.pack(">f", value).hex().upper()


def _f32_bits(value: float) -> int:
    import struct

    return struct.unpack(">i", struct.pack(">f", value))[0]


def _signature(decl: ir.Operation) -> tuple[list[TensorInfo], list[TensorInfo]]:
    ftype = ir.FunctionType(ir.TypeAttr(decl.attributes["function_type"]).value)
    ins = [tensor_info(t) for t in ftype.inputs]
    outs = [tensor_info(t) for t in ftype.results]
    if any(i is None for i in ins + outs):
        raise QmlirError(f"named op @{symbol_name(decl)} has a non-static tensor type")
    return ins, outs  # type: ignore[return-value]


def _dims(rank: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{i}" for i in range(rank)]


def _iterators(kinds: list[str]) -> str:
    return ", ".join(f'"{k}"' for k in kinds)


def _common(decl: ir.Operation, shape: tuple[int, ...]) -> dict[str, str]:
    dims = _dims(len(shape))
    return {
        "name": symbol_name(decl),
        "attrs": _attr_text(decl),
        "shape": shape_text(shape),
        "dims": ", ".join(dims),
        "parallels": _iterators(["parallel"] * len(shape)),
        "reductions": _iterators(["reduction"] * len(shape)),
    }


def _format(name: str) -> FloatFormat:
    fmt = FORMATS.get(name)
    if fmt is None:
        raise QmlirError(f"no CPU lowering for element format '{name}'")
    return fmt


def lower_amax(decl: ir.Operation) -> str:
    (x,), _ = _signature(decl)
    if x.rank < 2:
        return template("amax.mlir").substitute(_common(decl, x.shape))
    from passes.cpu_lowering_blocks import block_rows_bits, rowwise_block_amax_sibling

    bk = rowwise_block_amax_sibling(decl, x.shape) if x.dtype == "f32" else None
    if bk is not None:  # x's block amax too (nvfp4): share its block reduction
        m, k = x.shape
        return template("amax_via_blocks.mlir").substitute(
            name=symbol_name(decl),
            attrs=_attr_text(decl),
            M=m,
            K=k,
            Kb=k // bk,
            bk=bk,
            block_bits=block_rows_bits(m, k, bk),
        )
    # rank >= 2: per row of the [rows, last dim] view, then over the rows (spreads over cores)
    rows, cols = math.prod(x.shape[:-1]), x.shape[-1]
    collapse = ""  # rank 2: x is the view
    if x.rank > 2:
        groups = f"[{', '.join(str(i) for i in range(x.rank - 1))}], [{x.rank - 1}]"
        collapse = (
            f"  %x_rows = tensor.collapse_shape %x [{groups}]\n"
            f"      : tensor<{shape_text(x.shape)}xf32> into tensor<{rows}x{cols}xf32>"
        )
    return template("amax_rows.mlir").substitute(
        _common(decl, x.shape),
        R=rows,
        C=cols,
        collapse=collapse,
        rows="%x_rows" if collapse else "%x",
    )


def lower_compute_scale(decl: ir.Operation) -> str:
    rule = _str(decl, "rule")
    if rule not in ("fp8_per_tensor", "fp8_block"):
        raise QmlirError(f"no CPU lowering for compute_scale rule '{rule}'")
    (amax,), _ = _signature(decl)
    dims = ", ".join(_dims(amax.rank))
    mask = 0xFF800000 if _bool(decl, "pow2") else 0xFFFFFFFF
    return template("compute_scale_fp8.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        type=str(amax.builtin()),
        map=f"affine_map<({dims}) -> ({dims})>",
        iterators=_iterators(["parallel"] * amax.rank),
        epsilon_bits=str(_f32_bits(_float(decl, "epsilon"))),
        fp8_max=_f32_literal(_float(decl, "fp8_max")),
        pow2_mask=str(mask - (1 << 32)),
    )


def encode_snippet(fmt: FloatFormat, x: str = "%xv", s: str = "%s", prefix: str = "") -> str:
    """The encoder body (``x * s -> %<prefix>byte``, the code) for ``fmt`` (FP8 or E2M1)."""
    return template("encode_fp8.mlir").substitute(
        p=prefix,
        fmt_max=_f32_literal(fmt.max_finite),
        emin=fmt.emin,
        mbits=fmt.mbits,
        nan_code=fmt.nan_code,
        sign_shift=fmt.ebits + fmt.mbits,
        drop_zero_sign=int(not fmt.signed_zero),
        x=x,
        s=s,
    )


def reciprocal_snippet() -> str:
    """``%s -> %result = 1 / %s``, exact when the result is an f32 subnormal."""
    return template("reciprocal_f32.mlir").template


def lower_quantize(decl: ir.Operation) -> str:
    (x, _), _ = _signature(decl)
    fmt = _format(_str(decl, "format"))
    return template("quantize_fp8_per_tensor.mlir").substitute(
        _common(decl, x.shape), encode=encode_snippet(fmt), reciprocal=reciprocal_snippet()
    )


def _decode(prefix: str, fmt: FloatFormat) -> str:
    if fmt.name != "e4m3":
        raise QmlirError(f"no CPU decoder for element format '{fmt.name}'")
    return template("decode_fp8.mlir").substitute(
        p=prefix,
        mbits=fmt.mbits,
        man_shift=23 - fmt.mbits,
        exp_mask=(1 << fmt.ebits) - 1,
        man_mask=(1 << fmt.mbits) - 1,
        rebias=127 - fmt.bias,
        subnormal_ulp=_f32_literal(2.0 ** (fmt.emin - fmt.mbits)),
    )


def _matmul_maps(a: TensorInfo, b: TensorInfo, b_transposed: bool) -> dict[str, str]:
    """Indexing maps of ``[..., M, K] @ [K, N]`` or batched ``[B..., M, K] @ [B..., K, N]``."""
    if b.rank == 2:
        lead = _dims(a.rank - 1, "m")
        batch: list[str] = []
    else:
        batch = _dims(a.rank - 2, "b")
        lead = ["m"]
    dims = batch + lead + ["n", "k"]
    b_idx = batch + (["n", "k"] if b_transposed else ["k", "n"])
    kinds = ["parallel"] * (len(dims) - 1) + ["reduction"]

    def amap(idx: list[str]) -> str:
        return f"affine_map<({', '.join(dims)}) -> ({', '.join(idx)})>"

    return {
        "mm_a_map": amap(batch + lead + ["k"]),
        "mm_b_map": amap(b_idx),
        "mm_out_map": amap(batch + lead + ["n"]),
        "mm_iterators": _iterators(kinds),
    }


def lower_scaled_matmul(decl: ir.Operation) -> str:
    (a, _, b, _), (out,) = _signature(decl)
    a_fmt, b_fmt = _format(_str(decl, "a_format")), _format(_str(decl, "b_format"))
    return template("scaled_matmul_per_tensor.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        a_shape=shape_text(a.shape),
        b_shape=shape_text(b.shape),
        out_shape=shape_text(out.shape),
        a_dims=", ".join(_dims(a.rank)),
        b_dims=", ".join(_dims(b.rank)),
        out_dims=", ".join(_dims(out.rank)),
        a_parallels=_iterators(["parallel"] * a.rank),
        b_parallels=_iterators(["parallel"] * b.rank),
        out_parallels=_iterators(["parallel"] * out.rank),
        decode_a=_decode("a_", a_fmt),
        decode_b=_decode("b_", b_fmt),
        **_matmul_maps(a, b, _bool(decl, "b_transposed")),
    )


def lower_amax_history_update(decl: ir.Operation) -> str:
    (history, _, _), _ = _signature(decl)
    margin = int(ir.IntegerAttr(decl.attributes["qmlir.margin"]).value)
    return template("amax_history_update.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        length=history.shape[0],
        use_max="1" if _str(decl, "algo") == "max" else "0",
        fp8_max=_f32_literal(_float(decl, "fp8_max")),
        inv_margin=_f32_literal(2.0**-margin),
    )


def _by_scaling(per_tensor: Callable[[ir.Operation], str], block: str) -> Callable[..., str]:
    """Per-tensor lowering here, block-scaled ones in cpu_lowering_blocks (``block`` names it)."""

    def lower(decl: ir.Operation) -> str:
        if "qmlir.block" in decl.attributes or _scaling(decl) == "block":
            from passes import cpu_lowering_blocks

            return getattr(cpu_lowering_blocks, block)(decl)
        return per_tensor(decl)

    return lower


def _scaling(decl: ir.Operation) -> str:
    return _str(decl, "scaling") if "qmlir.scaling" in decl.attributes else ""


def _lower_swizzle(decl: ir.Operation) -> str:
    from passes.cpu_lowering_blocks import lower_swizzle

    return lower_swizzle(decl)


def _lower_compute_scale_any(decl: ir.Operation) -> str:
    """One lowering per scale rule family: FP32 scales here, the others in cpu_lowering_blocks."""
    from passes import cpu_lowering_blocks as blocks

    family = _str(decl, "rule").split("_")[0]
    lowering = {
        "fp8": lower_compute_scale,
        "e8m0": blocks.lower_compute_scale_e8m0,
        "nvfp4": blocks.lower_compute_scale_nvfp4,
        "cudnn": blocks.lower_compute_scale_cudnn,
    }.get(family)
    if lowering is None:
        raise QmlirError(f"no CPU lowering for compute_scale rule '{_str(decl, 'rule')}'")
    return lowering(decl)


LOWERINGS: dict[str, Callable[[ir.Operation], str]] = {
    "amax_history_update": lower_amax_history_update,
    "amax": _by_scaling(lower_amax, "lower_block_amax"),
    "compute_scale": _lower_compute_scale_any,
    "quantize": _by_scaling(lower_quantize, "lower_block_quantize"),
    "scaled_matmul": _by_scaling(lower_scaled_matmul, "lower_block_scaled_matmul"),
    "swizzle": _lower_swizzle,
    "block_scale_dequantize": lambda decl: _cudnn().lower_block_scale_dequantize(decl),
}


def _cudnn():  # type: ignore[no-untyped-def]
    from passes import cpu_lowering_cudnn

    return cpu_lowering_cudnn


def lower_text(decl: ir.Operation) -> str:
    kind = op_kind(decl)
    lowering = LOWERINGS.get(kind)
    if lowering is None:
        raise QmlirError(f"no CPU lowering for named op '{kind}' ({OP_ATTR})")
    return lowering(decl)
