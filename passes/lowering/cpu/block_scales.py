"""llvm-cpu lowerings of the block ``compute_scale`` rules: E8M0 (MXFP8, MXFP4), NVFP4's two levels
(global FP32, block E4M3; TE's and torchao's order), and cuDNN's round-up into E8M0 or E4M3.
(FP32 block scales share the per-tensor rule's template: ``per_tensor.lower_compute_scale``.)"""

from __future__ import annotations

import math
from collections.abc import Callable

from passes.base.numbers import f32_hex, f64_hex, to_f32
from passes.ir.dialect import NamedOp, ScaleRule
from passes.ir.formats import E4M3
from passes.lowering.cpu import snippets
from passes.lowering.cpu.common import definition, template
from passes.lowering.definitions import head
from passes.lowering.dims import row_signature


def lower_compute_scale_e8m0(op: NamedOp) -> str:
    """v = amax / fp8_max (TE: amax * f32(1/fp8_max)) into an E8M0 code, by the rule's rounding."""
    (amax,), _, rows = row_signature(op, "%amax")
    rounding = op.attrs.rule.e8m0_rounding
    fmt_max = op.attrs.fp8_max
    mbits = op.max_format.mbits
    divide = rounding == "rne"  # PyTorch divides by max; TE multiplies by f32(1/max)
    constant = fmt_max if divide else to_f32(1.0 / fmt_max)  # f32(1/max), as TE has it
    return definition(
        "compute_scale_e8m0.mlir",
        head(op),
        rule=op.attrs.rule.value,
        rule_body=template(f"e8m0_rule_{rounding}.mlir").substitute(
            emax_elem=int(math.floor(math.log2(fmt_max))),
            mbits=mbits,
            round_bit=1 << (23 - mbits - 1),
        ),
        v_doc=f"amax / {fmt_max:g}" if divide else f"amax * f32(1/{fmt_max:g})",
        a_f64="    %a64 = arith.extf %a : f32 to f64",
        a64="%a64",
        p_op="divf" if divide else "mulf",
        p_const=f64_hex(constant),
        Mb=rows,
        m_defs=rows.defs(),
        m=rows.empty,
        Kb=amax.shape[1],
    )


def lower_compute_scale_cudnn(op: NamedOp) -> str:
    """cuDNN: v = amax / vmax (one f32 division), rounded up into E8M0 or E4M3."""
    (amax,), _, rows = row_signature(op, "%amax")
    vmax = op.attrs.fp8_max
    scale_format = op.attrs.scale_format.value
    body = (
        "e8m0_rule_cudnn_round_up.mlir"
        if scale_format == "e8m0"
        else "e8m0_rule_cudnn_e4m3_round_up.mlir"
    )
    return definition(
        "compute_scale_e8m0.mlir",
        head(op),
        rule=f"cudnn_round_up into {scale_format}",
        rule_body=template(body).template,
        v_doc=f"amax / {vmax:g}",
        # an f32-subnormal amax (a block of subnormals) keeps its value: cuDNN's f32 division
        # gives a non-zero v, whose round-up is the smallest scale, not a zero scale
        a_f64=snippets.f64_from_f32("amax_", "%a"),
        a64="%amax_f64",
        p_op="divf",
        p_const=f64_hex(vmax),
        Mb=rows,
        m_defs=rows.defs(),
        m=rows.empty,
        Kb=amax.shape[1],
    )


def lower_compute_scale_nvfp4(op: NamedOp) -> str:
    """NVFP4's global scale (S, S_dec) or block decode scale d (E4M3), TE's or torchao's way."""
    rule = op.attrs.rule
    if rule is ScaleRule.NVFP4_GLOBAL:
        return definition(
            "compute_scale_nvfp4_global.mlir", head(op), reciprocal=snippets.reciprocal()
        )
    if rule is ScaleRule.NVFP4_GLOBAL_TORCHAO:
        return definition(
            "compute_scale_nvfp4_global_torchao.mlir",
            head(op),
            a_f64=snippets.f64_from_f32("a_", "%a"),
            g_f32=snippets.f32_from_f64("g_", "%g_abs"),
            g_back=snippets.f64_from_f32("gb_", "%g_f32"),
        )
    (amax, _), _, rows = row_signature(op, "%amax")
    if rule is ScaleRule.NVFP4_BLOCK_TORCHAO:
        return definition(
            "compute_scale_nvfp4_block_torchao.mlir",
            head(op),
            Mb=rows,
            m_defs=rows.defs(),
            m=rows.empty,
            Kb=amax.shape[1],
            a_f64=snippets.f64_from_f32("a_", "%a"),
            q1_f32=snippets.f32_from_f64("q1_", "%q1_abs"),
            q1_back=snippets.f64_from_f32("q1b_", "%q1_f32"),
            g_f64=snippets.f64_from_f32("g_", "%gv"),
            encode=snippets.encode(E4M3, x="%clamped", s="%one"),
        )
    return definition(
        "compute_scale_nvfp4_block.mlir",
        head(op),
        Mb=rows,
        m_defs=rows.defs(),
        m=rows.empty,
        Kb=amax.shape[1],
        sixth=f32_hex(1.0 / 6.0),  # f32(1/6), as TE folds it
        encode=snippets.encode(E4M3, x="%a", s="%mult"),
    )


# The block rules this module lowers (cpu/lower.py merges each module's table): a new rule is a
# function above and its entry here.
COMPUTE_SCALE: dict[ScaleRule, Callable[[NamedOp], str]] = {
    ScaleRule.E8M0_CEIL: lower_compute_scale_e8m0,
    ScaleRule.E8M0_FLOOR: lower_compute_scale_e8m0,
    ScaleRule.E8M0_RNE: lower_compute_scale_e8m0,
    ScaleRule.E8M0_EVEN: lower_compute_scale_e8m0,
    ScaleRule.NVFP4_GLOBAL: lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_GLOBAL_TORCHAO: lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_BLOCK: lower_compute_scale_nvfp4,
    ScaleRule.NVFP4_BLOCK_TORCHAO: lower_compute_scale_nvfp4,
    ScaleRule.CUDNN_ROUND_UP: lower_compute_scale_cudnn,
}
