"""cuda lowerings of the per-tensor quantize core: amax, the FP8 scale, the FP8 cast (and
fp8-delayed's fused cast + amax), NVFP4's global decode scale. Each is one kernel launch."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import f32_bits
from passes.ir.attributes import NamedOp, ScaleRule, Scaling
from passes.ir.formats import E4M3, E5M2
from passes.ir.types import shape_text
from passes.lowering.cpu.common import head
from passes.lowering.cuda.common import flat, grid_1d, reshape, ttype
from passes.lowering.cuda.kernels import Extern, definition, extern_text

# qmlir_fp8_scale_from_amax's `format` constant
_SCALE_FORMAT_CODES = {E4M3: 0, E5M2: 1}


def lower_amax(op: NamedOp, arch: str) -> str | None:
    if op.scaling is Scaling.BLOCK:
        return None  # block amax: fused into fused_quantize, else the template
    (x,), _ = op.signature()
    flat_x = flat(x)
    ext = Extern(
        "per_tensor",
        "qmlir_amax_f32",
        (("%flat", ttype(flat_x)), ("%zero", "tensor<f32>"), ("%n", "i32")),
        ("%zero",),
        "%amax",
        grid_1d(flat_x.shape[0]),
    )
    return definition(
        "amax.mlir",
        head(op),
        shape=shape_text(x.shape),
        flatten_x=reshape("%x", x, flat_x),
        n=flat_x.shape[0],
        extern=extern_text(ext, arch),
    )


def lower_compute_scale(op: NamedOp, arch: str) -> str | None:
    rule = op.rule
    if rule is ScaleRule.NVFP4_GLOBAL_DECODE:
        return _lower_nvfp4_decode_scale(op, arch)
    if rule is not ScaleRule.FP8_PER_TENSOR:
        return None
    code = _SCALE_FORMAT_CODES.get(op.max_format)
    if code is None:
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
    return definition(
        "compute_scale_fp8.mlir",
        head(op),
        format=code,
        pow2=int(op.flag("pow2")),
        eps_bits=f32_bits(op.number("epsilon")),
        extern=extern_text(ext, arch),
    )


def _lower_nvfp4_decode_scale(op: NamedOp, arch: str) -> str:
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
    return definition("compute_scale_nvfp4_decode.mlir", head(op), extern=extern_text(ext, arch))


def lower_quantize(op: NamedOp, arch: str) -> str | None:
    if op.scaling is not Scaling.PER_TENSOR:
        return None
    return lower_per_tensor_cast(op, arch, delayed=False)


def lower_per_tensor_cast(op: NamedOp, arch: str, delayed: bool) -> str:
    """(x, scale) → (data, scale_inv) on the per-tensor cast kernel; ``delayed`` (fp8-delayed's
    fused_quantize): the single-pass kernel that also returns this call's amax, reduced into a
    zero-filled operand it is tied to."""
    fmt = op.format()
    if fmt not in _SCALE_FORMAT_CODES:
        raise QmlirError(f"no cuda kernel for per-tensor {op.kind} to '{fmt.name}'")
    (x, _), _ = op.signature()
    flat_x = flat(x)
    amax = (("%zero", "tensor<f32>"),) if delayed else ()
    ext = Extern(
        "per_tensor",
        f"qmlir_quantize_fp8_{'delayed_' if delayed else ''}{fmt.name}",
        (("%flat", ttype(flat_x)), ("%scale", "tensor<f32>"), *amax, ("%n", "i32")),
        (ttype(flat_x, "i8"), "tensor<f32>", *(["%zero"] if delayed else [])),
        "%q",
        grid_1d(flat_x.shape[0], 4096),
    )
    name = "fused_quantize_per_tensor.mlir" if delayed else "quantize_fp8_per_tensor.mlir"
    return definition(
        name,
        head(op),
        format=fmt.name,
        shape=shape_text(x.shape),
        flatten_x=reshape("%x", x, flat_x),
        n=flat_x.shape[0],
        unflatten_data=reshape("%q#0", flat_x.with_dtype("i8"), x.with_dtype("i8")),
        extern=extern_text(ext, arch),
    )
