"""The parameter file's stream: tensors read one ahead, bytes hashed and written behind."""

from __future__ import annotations

import hashlib
import io
import threading
import time

import numpy as np
import pytest

from compiler.backend import weight_stream
from compiler.backend.weight_stream import ReadAhead, WriteBehind


class _Reader:
    def __init__(self, fail: str = "") -> None:
        self.reads: list[str] = []
        self.threads: list[str] = []
        self.fail = fail

    def __call__(self, name: str) -> np.ndarray:
        self.reads.append(name)
        self.threads.append(threading.current_thread().name)
        if name == self.fail:
            raise OSError(f"cannot read {name}")
        return np.full(4, len(self.reads), np.float32)


def test_read_ahead_reads_each_tensor_once_in_the_background() -> None:
    reader = _Reader()
    ahead = ReadAhead(reader, ["a", "b", "a", "c"])
    values = {name: ahead(name) for name in ["a", "b", "c"]}
    ahead.close()
    assert reader.reads == ["a", "b", "c"]  # "a" asked for twice in the order: read once
    assert all(t.startswith("qmlir-read") for t in reader.threads)
    assert [v[0] for v in values.values()] == [1, 2, 3]


def test_read_ahead_reads_a_name_asked_early_on_the_caller() -> None:
    reader = _Reader()
    ahead = ReadAhead(reader, ["a", "b", "c"])
    ahead("c")  # out of order: read here, and not again later
    ahead("a")
    ahead("b")
    ahead.close()
    assert sorted(reader.reads) == ["a", "b", "c"]
    assert reader.threads[reader.reads.index("c")] == threading.current_thread().name
    assert ahead("d")[0] == 4  # not in the order at all: read on the caller


def test_read_ahead_raises_a_read_error_where_the_tensor_is_asked_for() -> None:
    ahead = ReadAhead(_Reader(fail="b"), ["a", "b"])
    ahead("a")
    with pytest.raises(OSError, match="cannot read b"):
        ahead("b")
    ahead.close()


def test_write_behind_writes_and_hashes_in_order() -> None:
    out = io.BytesIO()
    sink = WriteBehind(out)
    chunks = [np.arange(n, dtype=np.uint8).tobytes() for n in (1, 1000, 5000, 3)]
    for chunk in chunks:
        sink.emit(memoryview(chunk))
    digest = sink.finish()
    assert out.getvalue() == b"".join(chunks)
    assert digest == hashlib.sha256(b"".join(chunks)).hexdigest()


class _SlowFile(io.BytesIO):
    """A file that takes its time and fails after ``limit`` bytes (a full disk)."""

    def __init__(self, limit: int = 1 << 40) -> None:
        super().__init__()
        self.limit = limit

    def write(self, data: object) -> int:
        time.sleep(0.002)
        view = memoryview(data)  # type: ignore[arg-type]
        if self.tell() + view.nbytes > self.limit:
            raise OSError(28, "No space left on device")
        return super().write(view)


def test_write_behind_holds_a_bounded_number_of_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weight_stream, "WRITE_BEHIND", 3000)
    sink = WriteBehind(_SlowFile())
    most = 0
    for _ in range(40):
        sink.emit(bytes(1000))
        most = max(most, max(w._queued for w in sink._workers))  # noqa: SLF001
    sink.finish()
    assert 1000 <= most <= 3000


def test_a_write_error_reaches_the_producer() -> None:
    sink = WriteBehind(_SlowFile(limit=2500))
    with pytest.raises(OSError, match="No space left"):
        for _ in range(100):
            sink.emit(bytes(1000))
        sink.finish()
    sink.abandon()


def test_a_tensor_over_the_read_ahead_size_is_read_when_asked_for() -> None:
    reader = _Reader()
    sizes = {"a": 10, "big": weight_stream.READ_AHEAD + 1, "c": 10}
    ahead = ReadAhead(reader, ["a", "big", "c"], sizes.get)
    for name in ["a", "big", "c"]:
        ahead(name)
    ahead.close()
    threads = dict(zip(reader.reads, reader.threads, strict=True))
    assert threads["big"] == threading.current_thread().name
    assert threads["a"].startswith("qmlir-read") and threads["c"].startswith("qmlir-read")


class _AdvisedReader(_Reader):
    def __init__(self) -> None:
        super().__init__()
        self.advised: list[str] = []

    def advise(self, name: str) -> None:
        self.advised.append(name)


def test_the_reader_is_told_of_the_tensors_after_the_one_read_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(weight_stream, "ADVISE_AHEAD", 25)
    reader = _AdvisedReader()
    names = ["a", "b", "c", "d", "e"]
    ahead = ReadAhead(reader, names, lambda name: 10)
    assert reader.advised == ["b", "c"]  # "a" is being read; 25 bytes cover two more
    for name in names:
        ahead(name)
    ahead.close()
    assert reader.advised == ["b", "c", "d", "e"]  # each once, in order
    assert reader.reads == names


def test_an_owner_lives_until_its_bytes_are_written_and_hashed() -> None:
    import weakref

    class _Owner:
        pass

    release = threading.Event()

    class _Held(io.BytesIO):
        def write(self, data: object) -> int:
            release.wait(5)
            return super().write(data)  # type: ignore[arg-type]

    owner = _Owner()
    alive = weakref.ref(owner)
    sink = WriteBehind(_Held())
    sink.emit(memoryview(b"abc"), owner)
    del owner
    assert alive() is not None  # queued, not written yet
    release.set()
    sink.finish()
    assert alive() is None
