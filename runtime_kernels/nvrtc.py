"""Build the hand-written CUDA kernels into PTX with NVRTC (from pip), cached on disk.

``compile_ptx("mxfp8", "sm_90")`` returns the PTX text (bytes) of ``src/mxfp8.cu`` for that GPU.
The NVRTC program gets the family's ``.cu`` and every header of ``include/`` in memory, so what is
compiled is exactly what is hashed: the cache key is the sources, the options, the architecture
and the NVRTC version. Results live under ``$XDG_CACHE_HOME/qmlir/ptx`` (default
``~/.cache/qmlir/ptx``), written atomically (a temporary file, then a rename).

NVRTC comes from the ``cuda`` extra (``cuda-bindings`` + ``nvidia-cuda-nvrtc-cu12``); without it
:func:`compile_ptx` raises :class:`KernelError`.

The bottom layer: this package imports nothing of qmlir's. The cuda lowering
(``passes/lowering/cuda/kernels.py``) calls it and raises a :class:`KernelError` on as a
``QmlirError`` with the same message.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_DIR = PACKAGE_DIR / "src"
INCLUDE_DIR = PACKAGE_DIR / "include"

NVRTC_MISSING = "the cuda target needs NVRTC: pip install 'qmlir[cuda]'"


class KernelError(Exception):
    """A kernel that cannot be built: an unknown family or architecture, NVRTC missing or failing.
    Its message is one line naming the problem (a failed compile adds NVRTC's log below)."""


# One family per source, src/<family>.cu; its entry points and the named op each serves are
# declared in passes/ir/cuda_kernels.py (tests/unit/test_cuda_ptx.py: the PTX defines exactly
# those).
KERNEL_FAMILIES: tuple[str, ...] = tuple(sorted(p.stem for p in SOURCE_DIR.glob("*.cu")))

# IEEE-exact float arithmetic on the device (no FMA contraction, no flush to zero), so every
# element's bytes equal the CPU path's; these are NVRTC's defaults except --fmad.
NVRTC_OPTIONS: tuple[str, ...] = (
    "--std=c++17",
    "--fmad=false",
    "--ftz=false",
    "--prec-div=true",
    "--prec-sqrt=true",
)

_ARCH = re.compile(r"^(?:sm_|compute_)?(\d{2,3})(a|f)?$")


def virtual_arch(arch: str) -> str:
    """``sm_90`` / ``90`` / ``compute_90`` -> ``compute_90`` (a suffix ``a``/``f`` is kept)."""
    match = _ARCH.match(arch.strip())
    if match is None:
        raise KernelError(f"unknown CUDA architecture '{arch}'; expected e.g. sm_89, sm_90, sm_100")
    number, suffix = match.groups()
    if int(number) < 89:
        raise KernelError(
            f"CUDA architecture '{arch}' has no FP8 tensor cores; need sm_89 or newer"
        )
    return f"compute_{number}{suffix or ''}"


def compile_ptx(kernel_family: str, arch: str) -> bytes:
    """PTX text of one kernel family for ``arch`` (``sm_89``, ``sm_90``, ``sm_100``, ...)."""
    _check_family(kernel_family)
    target = virtual_arch(arch)
    nvrtc = _load_nvrtc()
    version = _nvrtc_version(nvrtc)
    source = (SOURCE_DIR / f"{kernel_family}.cu").read_bytes()
    headers = _headers()
    options = (*NVRTC_OPTIONS, f"--gpu-architecture={target}")
    key = _cache_key(kernel_family, source, headers, options, version)
    cached = _cache_dir() / f"{kernel_family}-{target}-{key}.ptx"
    if cached.is_file():
        return cached.read_bytes()
    ptx = _nvrtc_compile(nvrtc, kernel_family, source, headers, options)
    _write_atomically(cached, ptx)
    return ptx


def _check_family(kernel_family: str) -> None:
    if kernel_family not in KERNEL_FAMILIES:
        known = ", ".join(KERNEL_FAMILIES)
        raise KernelError(f"unknown kernel family '{kernel_family}'; known: {known}")


def available() -> bool:
    """Whether NVRTC can be loaded (the ``cuda`` extra is installed)."""
    try:
        _load_nvrtc()
    except KernelError:
        return False
    return True


def _load_nvrtc() -> Any:
    try:  # the optional `cuda` extra: only the cuda target needs it
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise KernelError(NVRTC_MISSING) from exc
    try:
        _nvrtc_version(nvrtc)  # loads libnvrtc: fails when only cuda-bindings is installed
    except (OSError, RuntimeError) as exc:
        raise KernelError(f"{NVRTC_MISSING} ({exc})") from exc
    return nvrtc


def _nvrtc_version(nvrtc: Any) -> str:
    err, major, minor = nvrtc.nvrtcVersion()
    _check(nvrtc, err, "nvrtcVersion")
    return f"{major}.{minor}"


def _check(nvrtc: Any, err: Any, what: str, log: str = "") -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        detail = f":\n{log}" if log else ""
        raise KernelError(f"NVRTC {what} failed ({err.name}){detail}")


def _headers() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(INCLUDE_DIR.glob("*.cuh"))]


def _cache_key(
    family: str,
    source: bytes,
    headers: list[tuple[str, bytes]],
    options: tuple[str, ...],
    version: str,
) -> str:
    digest = hashlib.sha256()
    for part in (family.encode(), source, *options, version):
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    for name, text in headers:
        digest.update(name.encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:20]


def _write_atomically(path: Path, data: bytes) -> None:
    """A temporary file beside ``path``, then a rename: a concurrent build never reads half a
    file. The file gets the mode ``open()`` would give it (0666 less the umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qmlir" / "ptx"


def _nvrtc_compile(
    nvrtc: Any,
    family: str,
    source: bytes,
    headers: list[tuple[str, bytes]],
    options: tuple[str, ...],
) -> bytes:
    names = [name.encode() for name, _ in headers]
    texts = [text for _, text in headers]
    err, prog = nvrtc.nvrtcCreateProgram(
        source, f"{family}.cu".encode(), len(headers), texts, names
    )
    _check(nvrtc, err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _check(nvrtc, err, f"compile of {family}.cu", _program_log(nvrtc, prog))
        err, size = nvrtc.nvrtcGetPTXSize(prog)
        _check(nvrtc, err, "nvrtcGetPTXSize")
        buffer = b" " * size
        (err,) = nvrtc.nvrtcGetPTX(prog, buffer)
        _check(nvrtc, err, "nvrtcGetPTX")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buffer.rstrip(b"\0")


def _program_log(nvrtc: Any, prog: Any) -> str:
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or size <= 1:
        return ""
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    return log.rstrip(b"\0").decode(errors="replace")
