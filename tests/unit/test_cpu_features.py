"""Which CPU features an artifact needs and whether a host has them (passes/base/cpu_features)."""

from __future__ import annotations

import pytest

from passes.base import cpu_features
from passes.base.cpu_features import (
    cpuinfo_flags,
    enabled_features,
    host_problem,
    missing_features,
)

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu sse sse2 pni ssse3 fma sse4_1 sse4_2 popcnt avx f16c abm avx2 bmi1 bmi2
processor\t: 1
flags\t\t: fpu sse sse2
"""


def test_enabled_features_keeps_plus_once_in_order() -> None:
    assert enabled_features("+avx,+avx2,-avx512f,+avx,+crc32") == ["avx", "avx2", "crc32"]
    assert enabled_features("") == []


def test_cpuinfo_flags_of_the_first_processor() -> None:
    flags = cpuinfo_flags(CPUINFO)
    assert {"pni", "sse4_1", "abm", "bmi1", "avx2"} <= flags and "avx512f" not in flags


@pytest.mark.parametrize(
    ("feature", "missing"),
    [
        ("sse3", False),  # LLVM's name differs from the kernel's: pni
        ("sse4.1", False),  # sse4_1
        ("lzcnt", False),  # abm
        ("bmi", False),  # bmi1
        ("avx2", False),
        ("crc32", False),  # not reported by the kernel: never refuses
        ("64bit", False),
        ("avx512f", True),
        ("avx512bf16", True),  # avx512_bf16
        ("amx-tile", True),  # amx_tile
    ],
)
def test_missing_features_maps_llvm_names(feature: str, missing: bool) -> None:
    got = missing_features("x86_64", [feature], cpuinfo_flags(CPUINFO))
    assert got == ([feature] if missing else [])


def test_unknown_flags_or_other_arch_check_nothing() -> None:
    assert missing_features("x86_64", ["avx512f"], None) == []
    assert missing_features("aarch64", ["sve2"], set()) == []


def test_host_problem_names_the_missing_features(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_features, "host_flags", lambda: cpuinfo_flags(CPUINFO))
    monkeypatch.setattr(cpu_features, "host_arch", lambda: "x86_64")
    cpu = {"arch": "x86_64", "name": "znver4", "features": ["avx2", "avx512f", "avx512vl"]}
    problem = host_problem(cpu)
    assert problem is not None and "\n" not in problem
    assert "lacks avx512f, avx512vl" in problem and "'znver4'" in problem
    assert (
        host_problem({"arch": "x86_64", "name": "x86-64-v3", "features": ["avx2", "fma"]}) is None
    )
    other = host_problem({"arch": "aarch64", "name": "neoverse-v2", "features": []})
    assert other == "the artifact is compiled for aarch64 (CPU 'neoverse-v2'); this host is x86_64"
