"""E5M2, a training step's gradient format under ``fp8_format=hybrid``: the compiled quantize
core against the test reference bit for bit, and the CPU GEMM's decoder on every finite code."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from iree.compiler import ir
from iree.compiler.dialects import arith, func

import compiler
from passes.host.call import call, host_copies
from passes.host.evaluate import compile_host_module
from passes.ir.formats import E4M3, E5M2
from passes.ir.named_ops import NamedOpBuilder
from passes.ir.types import TensorInfo, builtin_tensor_type
from passes.lowering.declarations import lower_declarations, named_op_declarations
from passes.recipes import QuantizedOperand, get_recipe
from tests.reference import fp8


def check(x: np.ndarray) -> None:
    q = compiler.quantize(x, "fp8-current", role="gradient", fp8_format="hybrid")
    codes, scale_inv = fp8.quantize_per_tensor(x, fmt="e5m2")
    assert q.element_format == "e5m2"
    np.testing.assert_array_equal(q.data, codes)
    assert q.scale.tobytes() == np.float32(scale_inv).tobytes()


floats = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@given(
    st.sampled_from([(7,), (3, 100)]).flatmap(lambda s: hnp.arrays(np.float32, s, elements=floats))
)
def test_random_tensors_bit_exact(x: np.ndarray) -> None:
    check(x)


def _with_unit_scale(values: np.ndarray) -> np.ndarray:
    """Pads with 57344 (E5M2's max) so the scale is 1: values reach the cast unscaled."""
    return np.concatenate([values.astype(np.float32), np.float32([57344.0])])


EDGE_CASES = {
    "zeros and negative zeros": np.float32([0.0, -0.0, 0.0, -0.0]),
    "every e5m2 tie": _with_unit_scale(fp8.e5m2_ties()),
    "subnormals": _with_unit_scale(np.arange(-12, 13, dtype=np.float32) * 2.0**-18),
    "max and just past it": np.float32([57344, -57344, 57344.004, 61439, 61440, 65536, -7e4]),
    "infinities": np.float32([np.inf, -np.inf, 1.0, -2.0]),
    "nan": np.float32([np.nan, 1.0, -3.0, np.nan]),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases_bit_exact(name: str) -> None:
    check(EDGE_CASES[name])


def test_e4m3_recipes_keep_gradients_in_e4m3() -> None:
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    q = compiler.quantize(x, "fp8-current", role="gradient")
    assert q.element_format == "e4m3"
    np.testing.assert_array_equal(q.data, fp8.quantize_per_tensor(x)[0])


def test_gemm_decodes_every_finite_e5m2_code() -> None:
    """``[1, K]`` E5M2 codes times an E4M3 identity (unit scales): each output is one code's
    value, as the reference decodes it (inf and NaN codes would spread through the zeros)."""
    codes = np.array(
        [c for c in range(256) if np.isfinite(fp8.e5m2_value(c))], dtype=np.uint8
    ).reshape(1, -1)
    k = codes.shape[1]
    identity = np.where(np.eye(k, dtype=bool), np.uint8(0x38), np.uint8(0))  # E4M3 1.0
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        a_type, b_type = builtin_tensor_type((1, k), "i8"), builtin_tensor_type((k, k), "i8")
        out = TensorInfo((1, k), "f32")
        with ir.InsertionPoint(module.body):
            entry = func.FuncOp("gemm", ir.FunctionType.get([a_type, b_type], [out.builtin()]))
        block = entry.add_entry_block()
        with ir.InsertionPoint(block):
            one = arith.ConstantOp(
                builtin_tensor_type((), "f32"),
                ir.DenseElementsAttr.get_splat(
                    builtin_tensor_type((), "f32"), ir.FloatAttr.get_f32(1.0)
                ),
            ).result
            recipe = get_recipe("fp8-current", {"fp8_format": "hybrid"})
            y = recipe.emit_scaled_matmul(
                NamedOpBuilder(module),
                QuantizedOperand(block.arguments[0], one, E5M2),
                QuantizedOperand(block.arguments[1], one, E4M3),
                False,
                out,
            )
            func.ReturnOp([y])
        lower_declarations(module, named_op_declarations(module))
        text = str(module)
    function = compile_host_module(text).modules.module["gemm"]
    (result,) = host_copies(call(function, codes.view(np.int8), identity.view(np.int8)))
    np.testing.assert_array_equal(result, fp8.decode_e5m2(codes))
