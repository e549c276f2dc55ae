"""The two known import-noise log lines are dropped, nothing else (issue 30, item 7). Checked
with a handler on each logger itself: the libraries set their loggers' propagation and levels
once imported (transformers stops propagating), so the root logger may never see a record."""

from __future__ import annotations

import logging

import pytest

import compiler  # noqa: F401  (installs the filter)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.parametrize(
    ("logger", "message", "shown"),
    [
        ("torchao", "Failed to load /x/torchao/_C_mxfp8.abi3.so: Could not load", False),
        ("torchao", "Failed to load config.json", True),
        ("torchao", "something real went wrong", True),
        (
            "torch.utils._pytree",
            "<enum 'KernelPreference'> is an Enum subclass and is now natively supported by "
            "torch.compile as an opaque value type.",
            False,
        ),
        ("torch.utils._pytree", "a different pytree warning", True),
        ("transformers", "Failed to load /x/y.so", True),
    ],
)
def test_only_the_known_lines_are_dropped(logger: str, message: str, shown: bool) -> None:
    target = logging.getLogger(logger)
    handler = _Collect()
    level, disabled = target.level, target.disabled
    target.addHandler(handler)
    target.setLevel(logging.DEBUG)
    target.disabled = False
    try:
        target.warning(message)
    finally:
        target.removeHandler(handler)
        target.setLevel(level)
        target.disabled = disabled
    assert handler.messages == ([message] if shown else [])
