"""Pass ``compact-block-scales`` (llvm-cpu): every mx-layout ``scaled_matmul`` (mxfp8, mxfp4,
nvfp4) reads its operands' block scales compact, as their quantize wrote them.

The recipes swizzle each operand's E8M0 or E4M3 block scales into cuBLAS's 128x4 tiles (the
``mx`` layout), which a GPU's GEMM reads; a CPU's GEMM reads them back as the ``[rows, K
blocks]`` grid. Here each such GEMM's scale operand made by a ``swizzle`` (``mx``, not
transposed) is replaced by that swizzle's input, the compact grid, and the operand's layout
becomes ``compact`` (a declaration of its own); swizzles left unused are erased. The GEMM's
values are unchanged (the same scales, read without the round trip). A weight's scales then
fold to, and are stored as, its quantize's compact grid: a checkpoint's own bytes, and no
unswizzled copy of them hoisted beside the stored ones when the module loads (21 MB at 0.35B
under nvfp4, benchmarks/RESULTS.md). Runs after ``decode-gemv``, before
``fold-constant-quantize``; never for cuda, whose GEMM kernels read the mx layout.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls, producer
from passes.fusion.scale_chains import scaled_matmul_sites
from passes.ir.dialect import NamedOp, OpKind, ScaleFormat, Scaling
from passes.ir.layouts import ScaleLayout
from passes.ir.named_ops import NamedOpBuilder, erase_uncalled_declarations, variant_of


@register_pass
@dataclasses.dataclass(frozen=True)
class CompactBlockScales(ModulePass):
    name = "compact-block-scales"

    def apply(self, module: ir.Module) -> None:
        calls = NamedCalls(module)
        builder = NamedOpBuilder(module)
        rewritten: set[str] = set()
        swizzles: list[ir.Operation] = []
        for name, sites in scaled_matmul_sites(module, calls).items():
            attrs = NamedOp(calls.decls[name]).attrs
            if attrs.scaling is not Scaling.BLOCK or ScaleLayout.MX not in (
                attrs.a_layout,
                attrs.b_layout,
            ):
                continue
            # a, scale_a, [global_a], b, scale_b, [global_b]
            indices = (1, 4) if attrs.scale_format is ScaleFormat.NVFP4 else (1, 3)
            for call in sites:
                operands = list(call.operands)
                layouts = [attrs.a_layout, attrs.b_layout]
                for side, index in enumerate(indices):
                    swizzle = _mx_swizzle(calls, operands[index])
                    if layouts[side] is ScaleLayout.MX and swizzle is not None:
                        operands[index] = swizzle.operands[0]
                        layouts[side] = ScaleLayout.COMPACT
                        swizzles.append(swizzle)
                if layouts == [attrs.a_layout, attrs.b_layout]:
                    continue
                record = dataclasses.replace(attrs, a_layout=layouts[0], b_layout=layouts[1])
                compact = [lay is ScaleLayout.COMPACT for lay in layouts]
                tag = "".join(s for s, c in zip("ab", compact, strict=True) if c)
                variant = f"{variant_of(name, OpKind.SCALED_MATMUL)}.compact_{tag}"
                builder.replace_call(call, record, variant, operands, [call.results[0].type])
                rewritten.add(name)
        for swizzle in dict.fromkeys(swizzles):
            if not any(True for _ in swizzle.results[0].uses):
                swizzle.erase()
        erase_uncalled_declarations(module, rewritten | set(calls.decls))


def _mx_swizzle(calls: NamedCalls, value: ir.Value) -> ir.Operation | None:
    """The ``swizzle`` call (mx, not transposed) that made ``value``, if one did."""
    owner = producer(value)
    swizzle = calls.of_kind(owner, OpKind.SWIZZLE)
    if swizzle is None or swizzle.attrs.layout is not ScaleLayout.MX or swizzle.attrs.transpose:
        return None
    return owner
