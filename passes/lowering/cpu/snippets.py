"""Pieces of element math the templates splice into their ``linalg.generic`` bodies.

Each snippet file (a template without ``func.func``) starts with one line declaring its
interface, in this grammar (single spaces between entries; ``T`` a type without spaces)::

    // snippet: reads V:T ...; defines V:T ...[; locals V ...][; holes NAME ...]

``V`` is an SSA value as the template spells it: a parameter holding one (``${x}``), a prefixed
name (``%${p}byte``) or a fixed one (``%s``, ``%table#0``). ``reads``: what it uses without
defining it, which the enclosing body must provide; ``defines``: what it defines for the body to
use afterwards, among them every fixed (unprefixed) name it defines at its own level;
``locals``: the fixed names it defines inside its own regions; ``holes``: its parameters that
take other snippets' text (which declare their own names). Every other value it defines starts
with its prefix ``%${p}``, so two instances never collide. ``common.template`` drops the line
(the spliced text is unchanged); ``tests/unit/test_snippets.py`` parses every snippet instance
against its line and checks its names.
"""

from __future__ import annotations

from passes.base.errors import QmlirError
from passes.base.numbers import f32_hex
from passes.ir.formats import E4M3, E5M2, FloatFormat
from passes.lowering.cpu.common import template


def encode(fmt: FloatFormat, x: str = "%xv", s: str = "%s", prefix: str = "") -> str:
    """``x * s -> %<prefix>byte``: the saturating RNE code of ``fmt`` (FP8 or E2M1)."""
    return template("encode_fp8.mlir").substitute(
        p=prefix,
        fmt_max=f32_hex(fmt.max_finite),
        emin=fmt.emin,
        mbits=fmt.mbits,
        nan_code=fmt.nan_code,
        sign_shift=fmt.ebits + fmt.mbits,
        drop_zero_sign=int(not fmt.signed_zero),
        x=x,
        s=s,
    )


def encode_e2m1_te(x: str = "%xv", prefix: str = "") -> str:
    """TE's E2M1 encoder (``x * %s -> %<prefix>byte``) with the block's ``%s``, ``%s_sub`` and
    ``%neg_lo`` in scope (``nvfp4_block_lookup.mlir``)."""
    return template("encode_e2m1_te.mlir").substitute(
        p=prefix, x=x, s="%s", s_sub="%s_sub", neg_lo="%neg_lo"
    )


def reciprocal() -> str:
    """``%s -> %result = 1 / %s``, exact when the result is an f32 subnormal."""
    return template("reciprocal_f32.mlir").template


def decode(prefix: str, fmt: FloatFormat) -> str:
    """``%{prefix}code`` (i8) → ``%{prefix}val`` (f32): an E4M3 code's value, from its bits, or
    an E5M2 code's (a training step's gradients) through f16."""
    if fmt == E5M2:
        return template("decode_e5m2.mlir").substitute(p=prefix)
    if fmt != E4M3:
        raise QmlirError(f"no CPU decoder for element format '{fmt.name}'")
    return template("decode_fp8.mlir").substitute(
        p=prefix,
        mbits=fmt.mbits,
        man_shift=23 - fmt.mbits,
        exp_mask=(1 << fmt.ebits) - 1,
        man_mask=(1 << fmt.mbits) - 1,
        rebias=127 - fmt.bias,
        subnormal_ulp=f32_hex(2.0 ** (fmt.emin - fmt.mbits)),
    )


def decode_e2m1(prefix: str, out: str) -> str:
    """``%{prefix}nib`` (an E2M1 code in the low nibble, i8) → ``out`` (f32)."""
    return template("decode_e2m1.mlir").substitute(p=prefix, out=out)


def e2m1_twice(prefix: str) -> str:
    """``%{prefix}nib`` (an E2M1 code in the low nibble, i8) → ``%{prefix}twice`` (i8): its value
    times 2, an integer in -12..12."""
    return template("e2m1_twice_i8.mlir").substitute(p=prefix)


def decode_value(fmt: FloatFormat, prefix: str) -> str:
    """``%{prefix}code`` (i8, one code per byte) → ``%{prefix}val`` (f32), E4M3 or E2M1."""
    if fmt == E4M3:
        return decode(prefix, E4M3)
    if fmt.name == "e2m1":
        return template("decode_e2m1_code.mlir").substitute(p=prefix) + decode_e2m1(
            prefix, f"%{prefix}val"
        )
    raise QmlirError(f"unknown element format '{fmt.name}'")


def ldexp(prefix: str, src: str, k: str) -> str:
    """``src * 2^k -> %<prefix>out`` exactly, subnormal results included."""
    return template("ldexp_f32.mlir").substitute(p=prefix, src=src, k=k)


def f64_from_f32(prefix: str, src: str) -> str:
    """``src`` (f32) → ``%<prefix>f64``, exact for subnormal ``src`` under flush-to-zero."""
    return template("f64_from_f32.mlir").substitute(p=prefix, src=src)


def f32_from_f64(prefix: str, src: str) -> str:
    """``src`` (f64, >= 0) → ``%<prefix>f32``, rounded once to nearest even, subnormals kept."""
    return template("f32_from_f64.mlir").substitute(p=prefix, src=src)


def decode_scale_f64(scale_format: str) -> str:
    """``%sc_code`` (i8) → ``%scale64``: E8M0 2^(e-127) (0xFF NaN) or E4M3, exact in f64."""
    if scale_format == "e8m0":
        body = template("decode_e8m0_f64.mlir").template
    elif scale_format == "e4m3":
        body = decode("sc_", E4M3) + "\n    %scale64 = arith.extf %sc_val : f32 to f64"
    else:
        raise QmlirError(f"unknown scale format '{scale_format}'")
    return template("decode_scale_f64.mlir").substitute(scale_format=scale_format, decode=body)
