"""``compile_module``'s retry: a compile that fails with a known IREE failure (data tiling on
dynamic dims) runs once more with the retry flags; another failure is reported at once, with a
repro of the flags that failed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from iree.compiler import ir

from compiler.backend import iree_compile as backend
from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target
from passes.host.compile_cache import ENV
from passes.host.flags import (
    DYNAMIC_AVX2_CPU_FLAGS,
    DYNAMIC_CPU_RETRY_FLAGS,
    DYNAMIC_CPU_RETRY_ON,
    LARGE_VECTOR_RETRY_FLAGS,
    STACK_RETRY_FLAGS,
    first_error_line,
)

GENERIC = Target(cpu=Cpu("generic", "generic", "x86_64", ()))

MODULE = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }"


def _fake_compiler(failures: list[str]):  # type: ignore[no-untyped-def]
    """An ``iree-compile`` stand-in: fails with each of ``failures`` in turn, then writes a
    module; records each call's arguments."""
    calls: list[list[str]] = []

    def run(arguments: list[str]) -> tuple[int, str]:
        calls.append(arguments)
        if len(calls) <= len(failures):
            return 1, f"error: {failures[len(calls) - 1]}\n"
        Path(arguments[arguments.index("-o") + 1]).write_bytes(b"vmfb")
        return 0, ""

    return run, calls


def _compile(monkeypatch, failures: list[str], tmp_path: Path, dynamic: bool = True):  # type: ignore[no-untyped-def]
    run, calls = _fake_compiler(failures)
    monkeypatch.setattr(backend, "run_iree_compile", run)
    monkeypatch.delenv(ENV, raising=False)  # the fake's output must not be cached
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a failure's repro goes
    with ir.Context():
        module = ir.Module.parse(MODULE)
        try:
            return backend.compile_module(module, GENERIC, dynamic=dynamic), calls
        except QmlirError as e:
            return e, calls


def test_known_failure_retries_with_the_flags(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    known = "'affine.delinearize_index' op no basis element may be statically non-positive"
    result, calls = _compile(monkeypatch, [known], tmp_path)
    assert result == b"vmfb" and len(calls) == 2
    assert DYNAMIC_CPU_RETRY_FLAGS[0] not in calls[0] and calls[1][-3] == DYNAMIC_CPU_RETRY_FLAGS[0]


def test_other_failure_is_reported_without_retry(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result, calls = _compile(monkeypatch, ["'linalg.generic' op something else"], tmp_path)
    assert isinstance(result, QmlirError) and len(calls) == 1
    assert "something else" in str(result) and DYNAMIC_CPU_RETRY_FLAGS[0] not in str(result)


def test_retry_failure_reports_the_retried_flags(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    known = "'memref.alloca' op all stack allocations need to be hoisted"
    result, calls = _compile(monkeypatch, [known, "still broken"], tmp_path)
    assert isinstance(result, QmlirError) and len(calls) == 2
    assert "still broken" in str(result) and DYNAMIC_CPU_RETRY_FLAGS[0] in str(result)


@pytest.mark.parametrize("message", DYNAMIC_CPU_RETRY_ON)
def test_each_known_message_retries(monkeypatch, tmp_path, message: str) -> None:  # type: ignore[no-untyped-def]
    result, calls = _compile(monkeypatch, [message], tmp_path)
    assert result == b"vmfb" and len(calls) == 2


def test_static_compile_does_not_retry(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A static artifact takes its own data tiling; the dynamic one's fallback is not for it."""
    known = "'affine.delinearize_index' op no basis element may be statically non-positive"
    result, calls = _compile(monkeypatch, [known], tmp_path, dynamic=False)
    assert isinstance(result, QmlirError) and len(calls) == 1


def test_a_dispatch_over_the_stack_limit_retries_with_a_larger_one(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Static or dynamic: IREE's 32 KiB stack limit, raised to 64 KiB once (issue 30: a Qwen2
    training step at 8 x 32 tokens needed 33 KiB)."""
    known = "'func.func' op exceeded stack allocation limit of 32768 bytes for function"
    for dynamic in (False, True):
        result, calls = _compile(monkeypatch, [known], tmp_path, dynamic=dynamic)
        assert result == b"vmfb" and len(calls) == 2
        assert STACK_RETRY_FLAGS[0] in calls[1] and STACK_RETRY_FLAGS[0] not in calls[0]
        assert DYNAMIC_CPU_RETRY_FLAGS[0] not in calls[1]


def test_the_error_line_keeps_the_layer_its_notes_name() -> None:
    """IREE's error line often lacks the layer; its notes carry the importer's module path."""
    diagnostics = (
        "-:1109:10: error: 'func.func' op exceeded stack allocation limit of 32768 bytes for "
        "function. Got 33792 bytes\n"
        '<unknown>:0: note: loc("lm.model.layers.0.mlp.gate_proj"): called from\n'
        "-:1109:10: error: failed to run translation of source executable\n"
    )
    assert first_error_line(diagnostics) == (
        "'func.func' op exceeded stack allocation limit of 32768 bytes for function. Got 33792 "
        "bytes (in layer lm.model.layers.0.mlp.gate_proj)"
    )
    found = "x: error: One or more operations with large vector sizes (32768 bytes) were found:\n"
    note = 'y: note: loc("mlp.c_fc"): see current operation\n'
    assert first_error_line(found + note) == (
        "One or more operations with large vector sizes (32768 bytes) were found (in layer "
        "mlp.c_fc)"
    )
    assert first_error_line("z: error: plain\n") == "plain"


def test_large_vectors_then_their_stack_retry_twice(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An untied GPT-2 step (issue 30): the vector-size check off, then the larger stack."""
    vectors = "One or more operations with large vector sizes (32768 bytes) were found:"
    stack = "'func.func' op exceeded stack allocation limit of 32768 bytes for function"
    result, calls = _compile(monkeypatch, [vectors, stack], tmp_path, dynamic=False)
    assert result == b"vmfb" and len(calls) == 3
    assert LARGE_VECTOR_RETRY_FLAGS[0] in calls[1] and STACK_RETRY_FLAGS[0] not in calls[1]
    assert LARGE_VECTOR_RETRY_FLAGS[0] in calls[2] and STACK_RETRY_FLAGS[0] in calls[2]
    result, calls = _compile(monkeypatch, [vectors, vectors], tmp_path, dynamic=False)
    assert isinstance(result, QmlirError) and len(calls) == 2  # nothing new to add: stop


def test_still_over_the_larger_stack_limit_retries_without_peeling(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Dynamic AVX2 code over the stack limit with the larger one too (a 1.1B Llama's final
    RMSNorm under nvfp4: 120 KiB): once more without the peel strategy, the 64 KiB kept."""
    stack32 = "'func.func' op exceeded stack allocation limit of 32768 bytes for function"
    stack64 = "'func.func' op exceeded stack allocation limit of 65536 bytes for function"
    result, calls = _compile(monkeypatch, [stack32, stack64], tmp_path)
    assert result == b"vmfb" and len(calls) == 3
    assert all(DYNAMIC_AVX2_CPU_FLAGS[0] in call for call in calls[:2])
    assert DYNAMIC_AVX2_CPU_FLAGS[0] not in calls[2] and STACK_RETRY_FLAGS[0] in calls[2]
    # static code has no peeling to drop: the second failure is reported
    result, calls = _compile(monkeypatch, [stack32, stack64], tmp_path, dynamic=False)
    assert isinstance(result, QmlirError) and len(calls) == 2 and "65536" in str(result)
