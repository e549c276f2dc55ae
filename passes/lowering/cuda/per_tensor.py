"""cuda lowerings of the per-tensor quantize core: amax, the FP8 scale, the FP8 cast (and
fp8-delayed's fused cast + amax), NVFP4's global decode scale. Each is one kernel launch.

An activation with dynamic rows is flattened to ``[?]``: its element count ``n`` (``tensor.dim``
of the flat view) is the kernels' ``n`` push constant and the workload of their 1-D grid."""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import f32_bits
from passes.ir import cuda_kernels
from passes.ir.dialect import NamedOp, ScaleRule, Scaling
from passes.ir.formats import E4M3, E5M2
from passes.ir.types import TensorInfo, shape_text
from passes.lowering.cuda.common import dyn_type, flat, grid_1d, i32, reshape, signature
from passes.lowering.cuda.kernels import CudaLowering, Extern, definition, extern_text
from passes.lowering.definitions import head
from passes.lowering.dims import Dim, Dims

# qmlir_fp8_scale_from_amax's `format` constant
_SCALE_FORMAT_CODES = {E4M3: 0, E5M2: 1}


def select_amax(op: NamedOp) -> CudaLowering | None:
    """Per tensor: the kernel; a block amax is fused into fused_quantize, else the template."""
    return lower_amax if op.attrs.scaling is Scaling.PER_TENSOR else None


def lower_amax(op: NamedOp, arch: str) -> str:
    (x,), _ = signature(op)
    flat_x, n = _flat_view(x)
    kernel = cuda_kernels.AMAX
    ext = Extern(
        kernel.family.value,
        kernel.entry,
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


def select_compute_scale(op: NamedOp) -> CudaLowering | None:
    """The FP8 per-tensor rule (E4M3, E5M2) and NVFP4's decode scale; the others: templates."""
    rule = op.attrs.rule
    if rule is ScaleRule.NVFP4_GLOBAL_DECODE:
        return _lower_nvfp4_decode_scale
    if rule is ScaleRule.FP8_PER_TENSOR and op.max_format in _SCALE_FORMAT_CODES:
        return lower_compute_scale
    return None


def lower_compute_scale(op: NamedOp, arch: str) -> str:
    code = _SCALE_FORMAT_CODES[op.max_format]
    kernel = cuda_kernels.FP8_SCALE
    ext = Extern(
        kernel.family.value,
        kernel.entry,
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
        pow2=int(op.attrs.pow2),
        eps_bits=f32_bits(op.attrs.epsilon),
        extern=extern_text(ext, arch),
    )


def _lower_nvfp4_decode_scale(op: NamedOp, arch: str) -> str:
    """``nvfp4_global_decode`` (fuse-quantize-core): S_dec = 1 / S from the global amax."""
    kernel = cuda_kernels.NVFP4_DECODE_SCALE
    ext = Extern(
        kernel.family.value,
        kernel.entry,
        (("%amax", "tensor<f32>"),),
        ("tensor<f32>",),
        "%s_dec",
        (1, 1),
        block=32,
    )
    return definition("compute_scale_nvfp4_decode.mlir", head(op), extern=extern_text(ext, arch))


def select_quantize(op: NamedOp) -> CudaLowering | None:
    """Per tensor: the cast kernel; block quantize is fused into fused_quantize, else the
    template."""
    return lower_quantize if op.attrs.scaling is Scaling.PER_TENSOR else None


def lower_quantize(op: NamedOp, arch: str) -> str:
    return lower_per_tensor_cast(op, arch, delayed=False)


def lower_per_tensor_cast(op: NamedOp, arch: str, delayed: bool) -> str:
    """(x, scale) → (data, scale_inv) on the per-tensor cast kernel; ``delayed`` (fp8-delayed's
    fused_quantize): the single-pass kernel that also returns this call's amax, reduced into a
    zero-filled operand it is tied to."""
    fmt = op.attrs.format
    if fmt not in _SCALE_FORMAT_CODES:
        raise QmlirError(f"no cuda kernel for per-tensor {op.kind.value} to '{fmt.name}'")
    (x, _), _ = signature(op)
    flat_x, n = _flat_view(x)
    x_dims = Dims.read("%x", x)  # the data's output_shape
    amax = (("%zero", "tensor<f32>"),) if delayed else ()
    kernel = (cuda_kernels.QUANTIZE_FP8_DELAYED if delayed else cuda_kernels.QUANTIZE_FP8)[fmt]
    ext = Extern(
        kernel.family.value,
        kernel.entry,
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
