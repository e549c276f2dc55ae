"""The opt-in cache of IREE's output: a hit only for the same input, flags and IREE release."""

from __future__ import annotations

from pathlib import Path

import pytest

from passes.host import compile_cache
from passes.host.compile_cache import ENV, cache_key, cached_compile


class Producer:
    def __init__(self, data: bytes = b"vmfb") -> None:
        self.calls = 0
        self.data = data

    def __call__(self) -> bytes:
        self.calls += 1
        return self.data + bytes([self.calls])


def test_off_compiles_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in (None, "0", ""):
        if value is None:
            monkeypatch.delenv(ENV, raising=False)
        else:
            monkeypatch.setenv(ENV, value)
        produce = Producer()
        assert cached_compile([b"module", "--flag"], produce) == b"vmfb\x01"
        assert cached_compile([b"module", "--flag"], produce) == b"vmfb\x02"


def test_same_input_and_flags_hit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    produce = Producer()
    first = cached_compile([b"module", "--flag"], produce)
    assert cached_compile([b"module", "--flag"], produce) == first
    assert produce.calls == 1
    assert cached_compile([b"module", "--other"], produce) != first  # another flag
    assert cached_compile([b"module2", "--flag"], produce) != first  # another module
    assert cached_compile([b"module", "--flag", ""], produce) != first  # parts are delimited
    assert produce.calls == 4
    assert not list((tmp_path / "cache").glob(".*tmp"))  # written whole, then renamed


def test_a_failed_compile_is_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV, str(tmp_path))

    def fail() -> bytes:
        raise RuntimeError("iree failed")

    with pytest.raises(RuntimeError):
        cached_compile([b"bad"], fail)
    assert list(tmp_path.iterdir()) == []
    assert cached_compile([b"bad"], Producer()) == b"vmfb\x01"


def test_key_holds_iree_version_and_host_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = [b"module", "--iree-llvmcpu-target-cpu=host"]
    key = cache_key(parts)
    monkeypatch.setattr(compile_cache, "_host_cpu", lambda: "x86_64:avx2")
    assert cache_key(parts) != key  # another host's CPU: another entry
    named = [b"module", "--iree-llvmcpu-target-cpu=znver4"]
    before = cache_key(named)
    monkeypatch.setattr(compile_cache, "_host_cpu", lambda: "x86_64:sse2")
    assert cache_key(named) == before  # a named CPU: the same on every host
    monkeypatch.setattr(compile_cache, "_iree_version", lambda: "0.0-other")
    assert cache_key(named) != before  # another IREE release


def test_the_least_recently_used_go_first_past_the_cap(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os
    import time

    monkeypatch.setenv(ENV, str(tmp_path))
    monkeypatch.setenv(ENV + "_MAX_GB", str(250e-9))  # 250 bytes: two 100-byte entries
    first = cached_compile([b"a"], lambda: b"1" * 100)
    second = cached_compile([b"b"], lambda: b"2" * 100)
    past = time.time() - 60
    os.utime(tmp_path / f"{cache_key([b'a'])}.vmfb", (past, past))
    os.utime(tmp_path / f"{cache_key([b'b'])}.vmfb", (past - 60, past - 60))
    assert cached_compile([b"b"], Producer()) == second  # a hit: b is now the most recent
    cached_compile([b"c"], lambda: b"3" * 100)  # over the cap: a, the least recent, goes
    assert {p.name for p in tmp_path.glob("*.vmfb")} == {
        f"{cache_key([b'b'])}.vmfb",
        f"{cache_key([b'c'])}.vmfb",
    }
    assert first == b"1" * 100
