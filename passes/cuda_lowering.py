"""The cuda lowering of the named ops: calls into the hand-written kernels where there is one.

:func:`lower_text_cuda` returns a definition built from ``templates/cuda/`` (a function around a
``hal.dispatch.extern``) or ``None``, and the caller then uses the llvm-cpu template: those are
plain linalg and integer arithmetic, which IREE compiles for cuda as well. The quantize core
(amax, FP8 cast, fused block quantize) always takes the kernels; a GEMM whose kernel is not in
its family's PTX falls back to the template.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from iree.compiler import ir

from passes.cpu_lowering import _attr_text, _bool, _float, _signature, _str
from passes.cpu_lowering_blocks import ceil_div, swizzled_size
from passes.cuda_kernels import Extern, extern_text, has_kernel, template
from passes.errors import QmlirError
from passes.ir_types import TensorInfo, shape_text
from passes.named_ops import op_kind, symbol_name

# fp8_max of the formats qmlir_fp8_scale_from_amax knows, and its `format` constant.
_SCALE_FORMATS = {448.0: 0, 57344.0: 1}
_E8M0_RULES = {"e8m0_ceil": 0, "e8m0_floor": 1, "e8m0_rne": 2}


def _ttype(info: TensorInfo, dtype: str | None = None) -> str:
    dims = shape_text(info.shape)
    elem = dtype or info.dtype
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


def _flat(info: TensorInfo) -> TensorInfo:
    return TensorInfo((math.prod(info.shape),), info.dtype)


def _reshape(src: str, frm: TensorInfo, to: TensorInfo) -> str:
    """One op from ``frm`` to ``to`` (same elements, fewer/more leading dims)."""
    if frm.shape == to.shape:
        return f"tensor.cast {src} : {_ttype(frm)} to {_ttype(to)}"
    big, small = (frm, to) if frm.rank > to.rank else (to, frm)
    lead = big.rank - small.rank + 1  # the first `lead` dims of the larger fold into one
    groups = [list(range(lead))] + [[i] for i in range(lead, big.rank)]
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    if frm is big:
        return f"tensor.collapse_shape {src} {reassoc} : {_ttype(frm)} into {_ttype(to)}"
    return (
        f"tensor.expand_shape {src} {reassoc} output_shape "
        f"[{', '.join(map(str, to.shape))}] : {_ttype(frm)} into {_ttype(to)}"
    )


def _grid_1d(n: int, cap: int = 1024) -> tuple[int, int]:
    return (max(1, min(-(-n // 1024), cap)), 1)


def _i32_constants(values: dict[str, int]) -> str:
    return "".join(f"  %{k} = arith.constant {v} : i32\n" for k, v in values.items())


def _f32_bits(value: float) -> int:
    return struct.unpack(">i", struct.pack(">f", value))[0]


def lower_amax(decl: ir.Operation, arch: str) -> str | None:
    if "qmlir.block" in decl.attributes:
        return None  # block amax: fused into fused_quantize, else the template
    (x,), _ = _signature(decl)
    flat = _flat(x)
    ext = Extern(
        "per_tensor",
        "qmlir_amax_f32",
        (("%flat", _ttype(flat)), ("%zero", "tensor<f32>"), ("%n", "i32")),
        ("%zero",),
        "%amax",
        _grid_1d(flat.shape[0]),
    )
    return template("amax.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        shape=shape_text(x.shape),
        flatten_x=_reshape("%x", x, flat),
        n=flat.shape[0],
        extern=extern_text(ext, arch),
    )


def lower_compute_scale(decl: ir.Operation, arch: str) -> str | None:
    if _str(decl, "rule") == "nvfp4_global_decode":
        return _lower_nvfp4_decode_scale(decl, arch)
    if _str(decl, "rule") != "fp8_per_tensor":
        return None
    fmt = _SCALE_FORMATS.get(_float(decl, "fp8_max"))
    if fmt is None:
        return None
    ext = Extern(
        "per_tensor",
        "qmlir_fp8_scale_from_amax",
        (("%amax", "tensor<f32>"), ("%format", "i32"), ("%pow2", "i32"), ("%eps_bits", "i32")),
        ("tensor<f32>",),
        "%scale",
        (1, 1),
        block=32,
    )
    return template("compute_scale_fp8.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        format=fmt,
        pow2=int(_bool(decl, "pow2")),
        eps_bits=_f32_bits(_float(decl, "epsilon")),
        extern=extern_text(ext, arch),
    )


def _lower_nvfp4_decode_scale(decl: ir.Operation, arch: str) -> str:
    """``nvfp4_global_decode`` (fuse-quantize-core): S_dec = 1 / S from the global amax."""
    ext = Extern(
        "nvfp4",
        "qmlir_nvfp4_decode_scale",
        (("%amax", "tensor<f32>"),),
        ("tensor<f32>",),
        "%s_dec",
        (1, 1),
        block=32,
    )
    return template("compute_scale_nvfp4_decode.mlir").substitute(
        name=symbol_name(decl), attrs=_attr_text(decl), extern=extern_text(ext, arch)
    )


def lower_quantize(decl: ir.Operation, arch: str) -> str | None:
    if _str(decl, "scaling") != "per_tensor":
        return None
    return _lower_per_tensor_cast(decl, arch, delayed=False)


def _lower_per_tensor_cast(decl: ir.Operation, arch: str, delayed: bool) -> str:
    """(x, scale) → (data, scale_inv) on the per-tensor cast kernel; ``delayed`` (fp8-delayed's
    fused_quantize): the single-pass kernel that also returns this call's amax, reduced into a
    zero-filled operand it is tied to."""
    fmt = _str(decl, "format")
    if fmt not in ("e4m3", "e5m2"):
        raise QmlirError(f"no cuda kernel for per-tensor {op_kind(decl)} to '{fmt}'")
    (x, _), _ = _signature(decl)
    flat = _flat(x)
    amax = (("%zero", "tensor<f32>"),) if delayed else ()
    ext = Extern(
        "per_tensor",
        f"qmlir_quantize_fp8_{'delayed_' if delayed else ''}{fmt}",
        (("%flat", _ttype(flat)), ("%scale", "tensor<f32>"), *amax, ("%n", "i32")),
        (_ttype(flat, "i8"), "tensor<f32>", *(["%zero"] if delayed else [])),
        "%q",
        _grid_1d(flat.shape[0], 4096),
    )
    name = "fused_quantize_per_tensor.mlir" if delayed else "quantize_fp8_per_tensor.mlir"
    return template(name).substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        format=fmt,
        shape=shape_text(x.shape),
        flatten_x=_reshape("%x", x, flat),
        n=flat.shape[0],
        unflatten_data=_reshape("%q#0", flat.with_dtype("i8"), x.with_dtype("i8")),
        extern=extern_text(ext, arch),
    )


GEMM_TILE = 64  # gemm_block_scaled.cu: a 64x64 output tile per workgroup of 128 threads


def lower_scaled_matmul(decl: ir.Operation, arch: str) -> str | None:
    """The GEMM kernels take "nt" operands (B as [N, K]) with E4M3 or packed E2M1 data."""
    if not _bool(decl, "b_transposed"):
        return None
    ins, (out,) = _signature(decl)
    a, b = ins[0], ins[len(ins) // 2]
    if b.rank != 2 or {_str(decl, "a_format"), _str(decl, "b_format")} - {"e4m3", "e2m1"}:
        return None
    kernel, extra = _gemm_kernel(decl)
    if kernel is None or not has_kernel("gemm_block_scaled", kernel, arch):
        return None
    m, n = math.prod(a.shape[:-1]), b.shape[0]
    packed = _str(decl, "a_format") == "e2m1"
    k = a.shape[-1] * (2 if packed else 1)
    a_2d = TensorInfo((m, a.shape[-1]), a.dtype)
    c_2d = TensorInfo((m, n), "f32")
    names = ["%a"] + [f"%in{i}" for i in range(1, len(ins))]
    params = ", ".join(f"{nm}: {_ttype(t)}" for nm, t in zip(names, ins, strict=True))
    operands = [("%a_2d", _ttype(a_2d))] + [
        (nm, _ttype(t)) for nm, t in zip(names[1:], ins[1:], strict=True)
    ]
    constants = [("%m", "i32"), ("%n", "i32"), ("%k", "i32")]
    constants += [(f"%{key}", "i32") for key in extra]
    ext = Extern(
        "gemm_block_scaled",
        kernel,
        (*operands, *constants),
        (_ttype(c_2d),),
        "%c",
        (-(-n // GEMM_TILE), -(-m // GEMM_TILE)),
        block=128,
    )
    return template("scaled_matmul.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        scaling=_str(decl, "scaling"),
        kernel=kernel,
        params=params,
        out_shape=shape_text(out.shape),
        flatten_a=_reshape("%a", a, a_2d),
        M=m,
        N=n,
        K=k,
        extra_constants=_i32_constants(extra),
        extern=extern_text(ext, arch),
        unflatten_c=_reshape("%c", c_2d, out),
    )


def _gemm_kernel(decl: ir.Operation) -> tuple[str | None, dict[str, int]]:
    if _str(decl, "scaling") == "per_tensor":
        return "qmlir_gemm_fp8_per_tensor", {}
    scale_format = _str(decl, "scale_format")
    layouts = (_str(decl, "a_layout"), _str(decl, "b_layout"))
    if scale_format == "fp32" and set(layouts) <= {"block1d", "block2d"}:
        dims = {
            f"{p}_dims": 2 if lay == "block2d" else 1 for p, lay in zip("ab", layouts, strict=True)
        }
        return "qmlir_gemm_fp8_block", dims
    if scale_format == "e8m0" and layouts == ("mx", "mx"):
        return "qmlir_gemm_mxfp8", {}
    if scale_format == "nvfp4" and layouts == ("mx", "mx"):
        return "qmlir_gemm_nvfp4", {}
    return None, {}


def lower_fused_quantize(decl: ir.Operation, arch: str) -> str:
    """``fused_quantize`` (fuse-quantize-core): x [rows, cols] → data and GEMM-ready scales,
    rowwise (default), columnwise, or both (``outputs``: the combined kernels write both; for
    the columnwise alone, the rowwise outputs are written and dropped)."""
    if _str(decl, "scaling") == "per_tensor":
        return _lower_per_tensor_cast(decl, arch, delayed=True)
    ins, outs = _signature(decl)
    x = ins[0]
    rows, cols = x.shape
    outputs = _str(decl, "outputs") if "qmlir.outputs" in decl.attributes else "rowwise"
    kernel, family, extra = _fused_kernel(decl, outputs != "rowwise")
    kernel_outs = list(outs)
    if outputs == "columnwise":
        kernel_outs = _rowwise_outputs(family, rows, cols) + kernel_outs
    returned = range(len(kernel_outs) - len(outs), len(kernel_outs))
    names = ["%x", "%global_amax"][: len(ins)]
    params = ", ".join(f"{nm}: {_ttype(t)}" for nm, t in zip(names, ins, strict=True))
    constants = [("%rows", "i32"), ("%cols", "i32")] + [(f"%{key}", "i32") for key in extra]
    ext = Extern(
        family,
        kernel,
        (*((nm, _ttype(t)) for nm, t in zip(names, ins, strict=True)), *constants),
        tuple(_ttype(t) for t in kernel_outs),
        "%q",
        _fused_grid(family, rows, cols),
    )
    return template("fused_quantize.mlir").substitute(
        name=symbol_name(decl),
        attrs=_attr_text(decl),
        rule=_str(decl, "rule"),
        format=_str(decl, "format"),
        layout=_str(decl, "layout"),
        outputs=outputs,
        kernel=kernel,
        params=params,
        result_types=", ".join(_ttype(t) for t in outs),
        rows=rows,
        cols=cols,
        extra_constants=_i32_constants(extra),
        extern=extern_text(ext, arch),
        results=", ".join(f"%q#{i}" for i in returned),
    )


def _rowwise_outputs(family: str, rows: int, cols: int) -> list[TensorInfo]:
    """The combined kernels' rowwise data and scales (README.md), written first."""
    data = TensorInfo((rows, cols), "i8")
    if family == "block_fp8":  # sinv_row [ceil(cols/128), pad4(rows)]
        return [data, TensorInfo((ceil_div(cols, 128), ceil_div(rows, 4) * 4), "f32")]
    return [data, TensorInfo(swizzled_size("mx", rows, ceil_div(cols, 32)), "i8")]


def _fused_kernel(decl: ir.Operation, columnwise: bool) -> tuple[str, str, dict[str, int]]:
    rule, layout = _str(decl, "rule"), _str(decl, "layout")
    if rule == "fp8_block":
        extra = {"pow2": int(_bool(decl, "pow2")), "eps_bits": _f32_bits(_float(decl, "epsilon"))}
        if columnwise:
            kernel = "block1d"
        else:
            kernel = "block2d" if layout == "block2d" else "block1d_rowwise"
        return f"qmlir_quantize_fp8_{kernel}", "block_fp8", extra
    if rule in _E8M0_RULES:
        kernel = "qmlir_quantize_mxfp8" if columnwise else "qmlir_quantize_mxfp8_rowwise"
        return kernel, "mxfp8", {"rule": _E8M0_RULES[rule]}
    if rule == "nvfp4_block" and not columnwise:
        return "qmlir_nvfp4_quantize", "nvfp4", {}
    raise QmlirError(f"no cuda kernel for fused_quantize @{symbol_name(decl)}")


def _fused_grid(family: str, rows: int, cols: int) -> tuple[int, int]:
    """Workgroups per tile: 128x128 (block_fp8) or 32 rows x 128 columns (mxfp8, nvfp4)."""
    tile_rows = 128 if family == "block_fp8" else 32
    return (-(-cols // 128), -(-rows // tile_rows))


LOWERINGS: dict[str, Callable[[ir.Operation, str], str | None]] = {
    "amax": lower_amax,
    "compute_scale": lower_compute_scale,
    "quantize": lower_quantize,
    "scaled_matmul": lower_scaled_matmul,
    "fused_quantize": lower_fused_quantize,
}


def lower_text_cuda(decl: ir.Operation, arch: str) -> str | None:
    """The cuda definition of ``decl``, or None where the llvm-cpu template serves cuda too."""
    lowering = LOWERINGS.get(op_kind(decl))
    return lowering(decl, arch) if lowering is not None else None
