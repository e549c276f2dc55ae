"""Checkpoint tensors read from the disk past the page cache (``O_DIRECT``) where the kernel
does not hold them, from the cache where it does: the same bytes either way, 64-byte aligned."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from compiler.frontend import tensor_read
from compiler.frontend.read_buffers import ReadBuffers
from compiler.frontend.tensor_read import read_tensor, resident_share

SIZE = (12 << 20) + 4099  # not a whole number of sectors


def _file(tmp_path: Path) -> tuple[Path, np.ndarray]:
    data = np.random.default_rng(0).integers(0, 256, SIZE, dtype=np.uint8)
    path = tmp_path / "shard.safetensors"
    with open(path, "wb") as f:
        f.write(data.tobytes())
        f.flush()
        os.fsync(f.fileno())
    return path, data


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _share(path: Path, start: int, nbytes: int) -> float:
    fd = os.open(path, os.O_RDONLY)
    try:
        return resident_share(fd, start, nbytes)
    finally:
        os.close(fd)


def _direct_supported(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
    except OSError:
        return False
    return True


needs_direct = pytest.mark.skipif(
    tensor_read._LIBC is None, reason="no O_DIRECT or mincore on this platform"
)

# starts at every kind of offset a safetensors header gives (8-byte multiples), and a sector's
SPANS = [(8, 5 << 20), (4096, 6 << 20), (4096 * 3 + 24, (5 << 20) + 5), (12345, 7 << 20)]


@needs_direct
@pytest.mark.parametrize(("start", "nbytes"), SPANS)
def test_a_cold_tensor_is_read_past_the_page_cache(tmp_path: Path, start: int, nbytes: int) -> None:
    path, data = _file(tmp_path)
    if not _direct_supported(path):
        pytest.skip("the temporary folder's file system refuses O_DIRECT")
    _drop(path)
    assert _share(path, start, nbytes) < 0.1
    got = read_tensor(path, start, nbytes, ReadBuffers(64 << 20, 64 << 20))
    assert got.ctypes.data % 64 == 0
    np.testing.assert_array_equal(got, data[start : start + nbytes])
    # read from the disk straight into the stream's memory: the page cache holds none of it
    assert _share(path, start, nbytes) < 0.1


@needs_direct
def test_a_cached_tensor_is_copied_from_the_page_cache(tmp_path: Path) -> None:
    path, data = _file(tmp_path)
    path.read_bytes()  # every page cached
    got = read_tensor(path, 12345, 7 << 20, ReadBuffers(64 << 20, 64 << 20))
    np.testing.assert_array_equal(got, data[12345 : 12345 + (7 << 20)])
    assert got.ctypes.data % 64 == 0 and _share(path, 0, SIZE) == 1.0


@pytest.mark.parametrize("cold", [True, False])
def test_a_span_past_the_end_gives_the_bytes_there_are(tmp_path: Path, cold: bool) -> None:
    path, data = _file(tmp_path)
    if cold:
        _drop(path)
    start = SIZE - (5 << 20) + 13
    got = read_tensor(path, start, 6 << 20, ReadBuffers(64 << 20, 64 << 20))
    np.testing.assert_array_equal(got, data[start:])


def test_small_tensors_and_file_systems_without_direct_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, data = _file(tmp_path)
    _drop(path)
    small = read_tensor(path, 40, 1000, ReadBuffers(64 << 20, 64 << 20))
    np.testing.assert_array_equal(small, data[40:1040])
    refused = os.open

    def no_direct(file: object, flags: int, *args: object) -> int:
        if flags & getattr(os, "O_DIRECT", 0):
            raise OSError(22, "Invalid argument")
        return refused(file, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(tensor_read.os, "open", no_direct)
    monkeypatch.setattr(tensor_read, "_NO_DIRECT", set())
    got = read_tensor(path, 8, 6 << 20, ReadBuffers(64 << 20, 64 << 20))
    np.testing.assert_array_equal(got, data[8 : 8 + (6 << 20)])
    if tensor_read._LIBC is not None:
        assert path in tensor_read._NO_DIRECT  # not tried again for this file


@needs_direct
def test_short_direct_reads_are_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A direct read that returns part of the span (as a signal can make it) is continued from
    where it stopped, not taken for the file's end."""
    path, data = _file(tmp_path)
    if not _direct_supported(path):
        pytest.skip("the temporary folder's file system refuses O_DIRECT")
    _drop(path)
    real = os.preadv
    calls = []

    def at_most_a_mebibyte(fd: int, buffers: list[memoryview], offset: int) -> int:
        calls.append(offset)
        return real(fd, [buffers[0][: 1 << 20]], offset)

    monkeypatch.setattr(tensor_read.os, "preadv", at_most_a_mebibyte)
    got = read_tensor(path, 4096 * 3 + 24, (5 << 20) + 5, ReadBuffers(64 << 20, 64 << 20))
    np.testing.assert_array_equal(got, data[4096 * 3 + 24 : 4096 * 3 + 24 + (5 << 20) + 5])
    assert len(calls) == 6
