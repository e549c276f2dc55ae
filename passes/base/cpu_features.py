"""Which CPU an llvm-cpu artifact needs, and whether this host has it (no torch, no compiler).

An artifact compiled with ``--cpu host`` carries the compiling host's instruction set: loaded on
a host without, say, AVX-512, its first call dies of SIGILL. The compiler records the LLVM CPU
and features it compiled for in the metadata; the runtime compares them with this host's before
loading and refuses with the missing feature named.

Only features that change which instructions the code generator may emit are checked (SIMD, bit
manipulation, crypto, AMX), each through its name in Linux's ``/proc/cpuinfo``: LLVM also lists
features the kernel never reports (``crc32``, ``64bit``, ...), which must not refuse a host.
"""

from __future__ import annotations

import platform
from pathlib import Path

# LLVM x86 feature → the /proc/cpuinfo flag that says the host has it
X86_CPUINFO_FLAGS: dict[str, str] = {
    "sse": "sse",
    "sse2": "sse2",
    "sse3": "pni",
    "ssse3": "ssse3",
    "sse4.1": "sse4_1",
    "sse4.2": "sse4_2",
    "sse4a": "sse4a",
    "avx": "avx",
    "avx2": "avx2",
    "fma": "fma",
    "f16c": "f16c",
    "bmi": "bmi1",
    "bmi2": "bmi2",
    "lzcnt": "abm",
    "popcnt": "popcnt",
    "movbe": "movbe",
    "aes": "aes",
    "pclmul": "pclmulqdq",
    "vaes": "vaes",
    "vpclmulqdq": "vpclmulqdq",
    "gfni": "gfni",
    "sha": "sha_ni",
    "adx": "adx",
    "avx512f": "avx512f",
    "avx512bw": "avx512bw",
    "avx512cd": "avx512cd",
    "avx512dq": "avx512dq",
    "avx512vl": "avx512vl",
    "avx512ifma": "avx512ifma",
    "avx512vbmi": "avx512vbmi",
    "avx512vbmi2": "avx512_vbmi2",
    "avx512vnni": "avx512_vnni",
    "avx512bitalg": "avx512_bitalg",
    "avx512vpopcntdq": "avx512_vpopcntdq",
    "avx512bf16": "avx512_bf16",
    "avx512fp16": "avx512_fp16",
    "avxvnni": "avx_vnni",
    "amx-tile": "amx_tile",
    "amx-bf16": "amx_bf16",
    "amx-int8": "amx_int8",
}

# platform.machine() spellings → the architecture of IREE's target triple
_ARCH_NAMES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def host_arch() -> str:
    machine = platform.machine().lower()
    return _ARCH_NAMES.get(machine, machine)


def enabled_features(cpu_features: str) -> list[str]:
    """``"+avx,+avx2,-avx512f"`` → ``["avx", "avx2"]`` (LLVM's feature string, enabled ones, each
    once: IREE's host string repeats some)."""
    return list(dict.fromkeys(f[1:] for f in cpu_features.split(",") if f.startswith("+")))


def cpuinfo_flags(text: str) -> set[str]:
    """The flags of the first processor in a ``/proc/cpuinfo`` text."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def host_flags() -> set[str] | None:
    """This host's ``/proc/cpuinfo`` flags; None where there is no such file (not Linux)."""
    try:
        return cpuinfo_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        return None


def missing_features(arch: str, features: list[str], flags: set[str] | None) -> list[str]:
    """The features an artifact for ``arch`` needs that a host with ``flags`` lacks (LLVM names;
    only the checked ones, and only on x86_64, where the names are known)."""
    if arch != "x86_64" or flags is None:
        return []
    return [f for f in features if f in X86_CPUINFO_FLAGS and X86_CPUINFO_FLAGS[f] not in flags]


def host_problem(cpu: dict[str, object]) -> str | None:
    """Why this host cannot run code compiled for ``cpu`` (the artifact metadata's ``cpu``
    entry: ``arch``, ``name``, ``features``), in one line; None when it can."""
    arch = str(cpu.get("arch", ""))
    name = cpu.get("name", "?")
    if arch and arch != host_arch():
        return f"the artifact is compiled for {arch} (CPU '{name}'); this host is {host_arch()}"
    features = [str(f) for f in cpu.get("features", [])]  # type: ignore[attr-defined]
    missing = missing_features(arch, features, host_flags())
    if missing:
        return (
            f"this host's CPU lacks {', '.join(missing)}, which the artifact needs (compiled for "
            f"CPU '{name}'); recompile it here, or with --cpu generic or an older --cpu"
        )
    return None
