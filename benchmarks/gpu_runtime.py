"""The IREE runtime a GPU machine needs, small enough to travel beside ``build/gpu-check``.

The device tool carries at most 64 MiB a call (the working tree and every carried path). The
``iree-base-runtime`` wheel is 15 MB, most of it tools and a Tracy-instrumented copy of the
runtime that a check never loads; unpacked without them it is about 4 MB:

    python benchmarks/gpu_runtime.py --out wheels/site   # then PYTHONPATH=wheels/site there

It downloads the wheel for the GPU machine's Python (CPython 3.12, manylinux x86-64; the wheel is
``abi3``) at the version ``pyproject.toml`` pins, unless ``--wheel`` names one, and unpacks it
into ``--out`` without ``iree/_runtime_libs_tracy/`` and the ``iree-*`` executables.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "iree-base-runtime"


def pinned_version() -> str:
    """The ``iree-base-runtime`` version pyproject.toml pins (``==``)."""
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        text = line.strip().strip('",')
        if text.startswith(f"{PACKAGE}=="):
            return text.split("==", 1)[1]
    raise SystemExit(f"gpu_runtime: pyproject.toml pins no {PACKAGE}")


def download(into: Path) -> Path:
    """The wheel for the GPU machine's Python, downloaded into ``into``."""
    spec = f"{PACKAGE}=={pinned_version()}"
    cmd = [sys.executable, "-m", "pip", "download", spec, "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.12", "--platform", "manylinux_2_28_x86_64", "-d", str(into)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"gpu_runtime: pip could not download {spec}: {last}")
    (wheel,) = into.glob("iree_base_runtime-*.whl")
    return wheel


def needed(name: str) -> bool:
    """Whether a wheel member is needed to import and run ``iree.runtime``."""
    if name.startswith("iree/_runtime_libs_tracy/"):
        return False
    return not Path(name).name.startswith("iree-")  # iree-run-module, iree-benchmark-*, ...


def unpack(wheel: Path, out: Path) -> int:
    """Unpack the needed members of ``wheel`` into ``out``; their total size in bytes."""
    total = 0
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if needed(info.filename):
                z.extract(info, out)
                total += info.file_size
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("wheels/site"))
    parser.add_argument("--wheel", type=Path, help="a downloaded iree-base-runtime wheel")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(Path(tmp))
        total = unpack(wheel, args.out)
    print(f"gpu_runtime: {wheel.name} unpacked into {args.out}: {total / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
