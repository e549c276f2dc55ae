"""cuda lowerings of the per-tensor quantize core: amax, the FP8 scale, the FP8 cast (and
fp8-delayed's fused cast + amax), NVFP4's global decode scale. Each is one kernel launch.

An activation with dynamic rows is flattened to ``[?]``: its element count ``n`` (``tensor.dim``
of the flat view) is the kernels' ``n`` push constant and the workload of their 1-D grid."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import f32_bits
from passes.ir.attributes import NamedOp, ScaleRule, Scaling
from passes.ir.formats import E4M3, E5M2
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cuda.common import dyn_type, flat, grid_1d, i32, reshape, signature
from passes.lowering.cuda.kernels import Extern, definition, extern_text
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims

# qmlir_fp8_scale_from_amax's `format` constant
_SCALE_FORMAT_CODES = {E4M3: 0, E5M2: 1}


def lower_amax(op: NamedOp, arch: str) -> str | None:
    if op.scaling is Scaling.BLOCK:
        return None  # block amax: fused into fused_quantize, else the template
    (x,), _ = signature(op)
    flat_x, n = _flat_view(x)
    ext = Extern(
        "per_tensor",
        "qmlir_amax_f32",
        (("%flat", _flat_type(flat_x, n)), ("%zero", "tensor<f32>"), ("%n", "i32")),
        ("%zero",),
        "%amax",
        grid_1d(n.value),
    )
    return definition(
        "amax.mlir",
        head(op),
        shape=shape_text(x.shape),
        flatten_x=reshape("%x", x, flat_x),
        sizes=n.defs(),
        n=i32(n.value),
        extern=extern_text(ext, arch),
    )


def _flat_view(x: TensorInfo) -> tuple[TensorInfo, Dim]:
    """``%flat``'s type and its element count ``n`` (read from it where dynamic)."""
    flat_x = flat(x)
    return flat_x, Dim.read("%flat", flat_x, 0)


def _flat_type(flat_x: TensorInfo, n: Dim, dtype: str | None = None) -> str:
    return dyn_type(flat_x, Dims({0: n}), dtype)


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
    (x, _), _ = signature(op)
    flat_x, n = _flat_view(x)
    x_dims = Dims.read("%x", x)  # the data's output_shape
    amax = (("%zero", "tensor<f32>"),) if delayed else ()
    ext = Extern(
        "per_tensor",
        f"qmlir_quantize_fp8_{'delayed_' if delayed else ''}{fmt.name}",
        (("%flat", _flat_type(flat_x, n)), ("%scale", "tensor<f32>"), *amax, ("%n", "i32")),
        (_flat_type(flat_x, n, "i8"), "tensor<f32>", *(["%zero"] if delayed else [])),
        "%q",
        grid_1d(n.value, 4096),
    )
    name = "fused_quantize_per_tensor.mlir" if delayed else "quantize_fp8_per_tensor.mlir"
    return definition(
        name,
        head(op),
        format=fmt.name,
        shape=shape_text(x.shape),
        flatten_x=reshape("%x", x, flat_x),
        sizes=x_dims.defs() + n.defs(),
        n=i32(n.value),
        unflatten_data=reshape("%q#0", flat_x.with_dtype("i8"), x.with_dtype("i8"), x_dims),
        extern=extern_text(ext, arch),
    )
