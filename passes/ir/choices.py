"""The values a named op's enumerated attributes take (``passes/ir/dialect.py``'s records hold
them; the IR spells each by its value)."""

from __future__ import annotations

import enum


class Scaling(enum.Enum):
    """One scale per tensor, or one per block."""

    PER_TENSOR = "per_tensor"
    BLOCK = "block"


class ScaleFormat(enum.Enum):
    """How block scales are stored: FP32 ``scale_inv``, E8M0 or E4M3 codes, or NVFP4's E4M3
    codes with a per-tensor FP32 decode scale (``scaled_matmul`` only)."""

    FP32 = "fp32"
    E8M0 = "e8m0"
    E4M3 = "e4m3"
    NVFP4 = "nvfp4"


class ScaleRule(enum.Enum):
    """``compute_scale``'s rule: amax → scale (docs/numerics.md has each one's math)."""

    FP8_PER_TENSOR = "fp8_per_tensor"
    FP8_BLOCK = "fp8_block"
    E8M0_CEIL = "e8m0_ceil"
    E8M0_FLOOR = "e8m0_floor"
    E8M0_RNE = "e8m0_rne"
    E8M0_EVEN = "e8m0_even"
    NVFP4_GLOBAL = "nvfp4_global"
    NVFP4_GLOBAL_TORCHAO = "nvfp4_global_torchao"
    NVFP4_GLOBAL_DECODE = "nvfp4_global_decode"  # made by fuse-quantize-core (cuda) only
    NVFP4_BLOCK = "nvfp4_block"
    NVFP4_BLOCK_TORCHAO = "nvfp4_block_torchao"
    CUDNN_ROUND_UP = "cudnn_round_up"

    @property
    def is_e8m0(self) -> bool:
        return self in (
            ScaleRule.E8M0_CEIL,
            ScaleRule.E8M0_FLOOR,
            ScaleRule.E8M0_RNE,
            ScaleRule.E8M0_EVEN,
        )

    @property
    def e8m0_rounding(self) -> str:
        """``ceil``, ``floor``, ``rne`` or ``even`` for an E8M0 rule."""
        assert self.is_e8m0, self
        return self.value.removeprefix("e8m0_")


class Nvfp4ScaleOrder(enum.Enum):
    """The order of the two-level scaling's f32 operations.

    ``TE``: S = 2688 / amax, d = cast(block_amax * (S * f32(1/6))), enc = 1 / (d * (1/S)).
    ``TORCHAO``: g = amax / 2688, d = cast(clamp((block_amax / 6) / g, 2^-6, 448)),
    enc = (1 / g) / d, and -0.0 keeps its sign (torchao's ``nvfp4_quantize``).
    """

    TE = "te"
    TORCHAO = "torchao"


class AmaxComputeAlgo(enum.Enum):
    """How the scale's amax comes from the history.

    ``MAX``: the largest amax in the history (the current call's included).
    ``MOST_RECENT``: the current call's amax (slot 0 after recording).
    """

    MAX = "max"
    MOST_RECENT = "most_recent"


class FusedOutputs(enum.Enum):
    """What a ``fused_quantize`` (fuse-quantize-core) writes: the rowwise data and scales, the
    columnwise ones, or both (rowwise first)."""

    ROWWISE = "rowwise"
    COLUMNWISE = "columnwise"
    BOTH = "rowwise+columnwise"


class GemmOperandType(enum.Enum):
    """The element type a scaled GEMM's decoded operands take on llvm-cpu (``gemm-operands``)."""

    F32 = "f32"
    BF16 = "bf16"


class GemvIsa(enum.Enum):
    """The instructions a one-row GEMM's matrix-vector product (``decode-gemv``,
    ``passes/lowering/cpu/gemv.py``) is written for: AVX512-BF16 and AVX512-VBMI (byte-table
    decode to bf16, ``vdpbf16ps``), or AVX2 with FMA and F16C (FP8 codes' bits shifted into
    f32s', f32 FMAs; E2M1 products in integers, their E4M3 scales through f16)."""

    AVX512_BF16 = "avx512bf16"
    AVX2 = "avx2"
