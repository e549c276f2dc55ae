"""The dialect's one encoding: a record encodes to its declaration's attributes and decodes back
to itself, absent fields stay absent, and a bad value is a one-line error naming the op."""

from __future__ import annotations

import pytest
from iree.compiler import ir

from passes.base.errors import QmlirError
from passes.ir.dialect import AmaxComputeAlgo as Algo
from passes.ir.dialect import (
    AmaxHistoryUpdate,
    Attrs,
    ComputeScale,
    FusedOutputs,
    FusedQuantize,
    Quantize,
    ScaledMatmul,
    ScaleRule,
    Scaling,
    Swizzle,
    decode,
    encode,
)
from passes.ir.formats import E2M1, E4M3
from passes.ir.layouts import ScaleLayout
from passes.ir.named_ops import NamedOpBuilder

RECORDS: list[Attrs] = [
    ComputeScale(rule=ScaleRule.FP8_PER_TENSOR, fp8_max=448.0, epsilon=0.0, pow2=False),
    ComputeScale(rule=ScaleRule.NVFP4_GLOBAL),
    Quantize(format=E2M1, scaling=Scaling.BLOCK, block=(1, 16), packed=True),
    ScaledMatmul(a_format=E4M3, b_format=E4M3, scaling=Scaling.PER_TENSOR, b_transposed=True),
    AmaxHistoryUpdate(algo=Algo.MAX, margin=2, fp8_max=448.0, outlier_factor=1.5),
]


_KEEP: list[ir.Module] = []  # a declaration lives as long as its module


def _declared(record: Attrs) -> ir.Operation:
    module = ir.Module.create()
    _KEEP.append(module)
    name = NamedOpBuilder(module).declare(record, "v", [], [])
    (decl,) = [op.operation for op in module.body.operations]
    assert name == f"qmlir.{record.kind.value}.v"
    return decl


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.kind.value)
def test_round_trip(record: Attrs) -> None:
    with ir.Context(), ir.Location.unknown():
        decl = _declared(record)
        assert decode(decl) == record
        present = {n for n in decl.attributes if n.startswith("qmlir.")}
        assert present == set(encode(record))


def test_types_of_the_encoding() -> None:
    with ir.Context(), ir.Location.unknown():
        attrs = encode(RECORDS[-1])
        assert str(attrs["qmlir.margin"]) == "2 : i64"
        assert str(attrs["qmlir.fp8_max"]) == "4.480000e+02 : f32"
        assert str(attrs["qmlir.outlier_factor"]) == "1.500000e+00 : f64"
        assert "qmlir.skip_non_finite" not in attrs
        assert str(encode(RECORDS[2])["qmlir.block"]) == "array<i64: 1, 16>"


def test_fused_record_carries_its_chain() -> None:
    q = Quantize(format=E4M3, scaling=Scaling.BLOCK, block=(1, 32))
    cs = ComputeScale(rule=ScaleRule.E8M0_CEIL, fp8_max=448.0)
    sw = Swizzle(layout=ScaleLayout.MX, transpose=False)
    fused = FusedQuantize.of(q, cs, sw, FusedOutputs.BOTH)
    assert (fused.block, fused.rule, fused.layout, fused.writes) == (
        (1, 32),
        ScaleRule.E8M0_CEIL,
        ScaleLayout.MX,
        FusedOutputs.BOTH,
    )
    assert FusedQuantize.of(q).writes is FusedOutputs.ROWWISE


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("qmlir.rule", '"fp9"', "unknown ScaleRule 'fp9' in qmlir.rule"),
        ("qmlir.fp8_max", '"big"', "unknown f32 'big' in qmlir.fp8_max"),
        ("qmlir.op", '"transmogrify"', "unknown op kind 'transmogrify'"),
    ],
)
def test_bad_values_are_named(key: str, value: str, message: str) -> None:
    with ir.Context(), ir.Location.unknown():
        decl = _declared(RECORDS[0])
        decl.attributes[key] = ir.Attribute.parse(value)
        with pytest.raises(QmlirError, match=f"@qmlir.compute_scale.v.*{message}"):
            decode(decl)


def test_missing_required_attribute() -> None:
    with ir.Context(), ir.Location.unknown():
        decl = _declared(RECORDS[0])
        del decl.attributes["qmlir.rule"]
        with pytest.raises(QmlirError, match="has no attribute 'qmlir.rule'"):
            decode(decl)
