"""The two known import-noise log lines are dropped, nothing else (issue 30, item 7)."""

from __future__ import annotations

import logging

import pytest

import compiler  # noqa: F401  (installs the filter)


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
def test_only_the_known_lines_are_dropped(
    logger: str, message: str, shown: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        logging.getLogger(logger).warning(message)
    assert [r.getMessage() for r in caplog.records] == ([message] if shown else [])
