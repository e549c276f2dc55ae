"""passes.host.call: the calling thread is SCHED_BATCH for an IREE call, and only for the call."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from passes.host.call import call, host_copies, waiting_thread

linux_sched = pytest.mark.skipif(
    not hasattr(os, "SCHED_BATCH"), reason="scheduling policies are Linux's"
)


def _policy() -> int:
    return os.sched_getscheduler(0)


def _in_thread(body: Callable[[], Any]) -> Any:
    """Runs ``body`` on a fresh thread (its own policy) and returns what it returned."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = body()
        except BaseException as e:  # re-raised on the test's thread
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@linux_sched
def test_the_call_runs_under_sched_batch_and_the_policy_comes_back() -> None:
    def body() -> tuple[int, int, int]:
        before = _policy()
        (during,) = call(_policy)
        return before, during, _policy()

    before, during, after = _in_thread(body)
    assert before == os.SCHED_OTHER
    assert during == os.SCHED_BATCH
    assert after == os.SCHED_OTHER


@linux_sched
def test_the_policy_comes_back_when_the_call_raises() -> None:
    def failing() -> None:
        raise RuntimeError("the module failed")

    def body() -> int:
        with pytest.raises(RuntimeError, match="the module failed"):
            call(failing)
        return _policy()

    assert _in_thread(body) == os.SCHED_OTHER


@linux_sched
def test_batch_false_leaves_the_thread_alone() -> None:
    assert _in_thread(lambda: call(_policy, batch=False)) == (os.SCHED_OTHER,)


@linux_sched
def test_a_thread_under_another_policy_is_left_as_it_is() -> None:
    def body() -> tuple[bool, int, int]:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        with waiting_thread() as switched:
            during = _policy()
        return switched, during, _policy()

    switched, during, after = _in_thread(body)
    assert not switched
    assert during == after == os.SCHED_IDLE


@linux_sched
def test_a_refused_switch_still_runs_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise PermissionError("not allowed here")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    assert _in_thread(lambda: call(_policy)) == (os.SCHED_OTHER,)


def test_results_come_back_as_a_tuple() -> None:
    assert call(lambda: None) == ()
    assert call(lambda a: a + 1, 1) == (2,)
    assert call(lambda: [1, 2]) == (1, 2)


def test_host_copies_own_their_memory() -> None:
    class Result:
        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def to_host(self) -> np.ndarray:
            return self.a

    source = np.arange(4, dtype=np.float32)
    (copy,) = host_copies((Result(source),))
    source[0] = 9.0
    assert copy.tolist() == [0.0, 1.0, 2.0, 3.0]


_SUM = """module {
  func.func @total(%a: tensor<128x256xf32>) -> tensor<f32> {
    %z = arith.constant dense<0.0> : tensor<f32>
    %r = linalg.reduce ins(%a : tensor<128x256xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
      (%x: f32, %acc: f32) { %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32 }
    return %r : tensor<f32>
  }
}"""


def test_an_imported_array_is_read_in_place_and_a_small_one_is_left_alone() -> None:
    from passes.host.call import imported
    from passes.host.evaluate import compile_host_module

    context = compile_host_module(_SUM)
    device = context.config.device
    total = context.modules.module["total"]
    raw = np.zeros(128 * 256 + 16, np.float32)
    start = (-raw.ctypes.data % 64) // 4
    x = raw[start : start + 128 * 256].reshape(128, 256)
    argument = imported(device, x)
    assert not isinstance(argument, np.ndarray)  # 128 KiB, aligned: shared with IREE
    x[0, 0] = 5.0  # after the import: a copy would not see it
    assert host_copies(call(total, argument))[0] == 5.0
    small = np.ones(4, np.float32)
    assert imported(device, small) is small
    assert isinstance(imported(device, x[:, ::2]), np.ndarray)  # not contiguous
    assert isinstance(
        imported(device, raw[start + 1 : start + 1 + 128 * 256]), np.ndarray
    )  # misaligned
