"""Where a generator's decode step spends its time on the CPU, by dispatch family.

    python benchmarks/profile_decode.py [--size 0.35b] [--recipes none fp8-current]
                                        [--work DIR] [--prompt 32] [--steps 64] [--max-seq 256]
                                        [--phase decode|prefill] [--malloc retain|default]
                                        [--recompile]

``iree-profile`` cannot read a generator (IREE 3.13's tools refuse its initializer: "indirect
buffer reference slot 0 is out of range", RESULTS.md), so this samples the process with Linux
``perf`` instead. Per recipe it compiles a generator of the random Llama of ``--size``
(``llm_scale.py``'s checkpoint, weights external) with IREE's dispatches in a system shared
library (``--iree-llvmcpu-link-embedded=false``: the same code, in an ELF that ``perf`` can see),
runs the prompt's prefill in a child process, attaches ``perf record`` to it for ``--steps``
one-token decode steps only, and names each sample's function from the library's symbol table
(the library, loaded from a deleted temporary file, is read back out of the ``.vmfb``, a zip).

``--phase prefill`` samples ``--steps`` prefills of the whole ``--prompt`` instead (each after
the first overwrites the cache from position 0), where a long prompt's time goes.

Printed per recipe: the decode step's (or the prefill's) wall time, and per dispatch family
(IREE's dispatch names: ``matmul_like``, ``pack``, ``elementwise``, ``reduction``, ...) its share
of the sampled CPU time and its CPU milliseconds per step (both worker threads summed: a family's
CPU time can exceed its share of the wall time), then the same for the ten costliest dispatches.
Samples outside the library are "IREE runtime, Python, kernel". Needs ``perf`` with user-space
sampling allowed (``/proc/sys/kernel/perf_event_paranoid`` <= 2).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from llm_scale import SIZES, write_checkpoint  # noqa: E402

FREQUENCY = 999  # samples a second per thread
SYSTEM_LIBRARY = ("--iree-llvmcpu-link-embedded=false", "--iree-llvmcpu-debug-symbols=true")
HOST = "IREE runtime, Python, kernel"

_CHILD = r"""
import json, sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import compiler
if sys.argv[5] == "retain":
    compiler.retain_freed_memory()  # as `qmlir generate` does
gen = compiler.load(sys.argv[2])
prompt, steps = int(sys.argv[3]), int(sys.argv[4])
ids = np.random.default_rng(3).integers(0, gen.generation.vocab, (1, prompt)).astype(np.int64)
token = int(gen.step(ids, 0)[0].argmax())
token = int(gen.step(np.array([[token]], np.int64), prompt)[0].argmax())  # a warm-up step
print("ready", flush=True)
sys.stdin.readline()  # the profiler is attached
start = time.perf_counter()
if sys.argv[6] == "prefill":
    for _ in range(steps):
        gen.step(ids, 0)
else:
    for pos in range(prompt + 1, prompt + 1 + steps):
        token = int(gen.step(np.array([[token]], np.int64), pos)[0].argmax())
print(json.dumps({"step_s": (time.perf_counter() - start) / steps}), flush=True)
"""


def compile_generator(folder: Path, recipe: str, out: Path, max_seq: int) -> None:
    flags = [f"--iree-flag={f}" for f in SYSTEM_LIBRARY]
    subprocess.run(
        [sys.executable, "-m", "compiler.cli", "compile", str(folder), "--recipe", recipe,
         "--generate", "--max-seq-len", str(max_seq), "--weights", "external", "-q", *flags,
         "-o", str(out)],
        check=True, cwd=ROOT,
    )  # fmt: skip
    os.sync()  # the new parameter file written back before the sampled run (generate.py)


def record(
    artifact: Path, prompt: int, steps: int, data: Path, malloc: str, phase: str = "decode"
) -> float:
    """``perf record`` of ``steps`` decode steps of ``artifact`` (the prefill and a warm-up step
    before it attaches), or of ``steps`` prefills (``phase="prefill"``): the mean call's wall
    seconds."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(ROOT),
            str(artifact),
            str(prompt),
            str(steps),
            malloc,
            phase,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdin is not None and child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        raise SystemExit(f"the generator did not start: exit {child.wait()}")
    perf = subprocess.Popen(
        ["perf", "record", "-F", str(FREQUENCY), "-p", str(child.pid), "-o", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # perf attaches to every thread
    child.stdin.write("go\n")
    child.stdin.flush()
    line = child.stdout.readline()
    child.wait()
    perf.send_signal(signal.SIGINT)
    perf.wait()
    return float(json.loads(line)["step_s"])


def library_symbols(artifact: Path) -> tuple[list[int], list[str]]:
    """The dispatch functions of the artifact's system library: start addresses and names,
    sorted (``nm`` of the ``.so`` stored in the ``.vmfb``)."""
    with zipfile.ZipFile(artifact) as z:
        name = next(n for n in z.namelist() if n.endswith(".so"))
        library = artifact.with_suffix(".dispatches.so")
        library.write_bytes(z.read(name))
    nm = subprocess.run(
        ["nm", "-n", "--defined-only", str(library)], capture_output=True, text=True, check=True
    )
    starts, names = [], []
    for line in nm.stdout.splitlines():
        address, kind, symbol = line.split(maxsplit=2)
        if kind.lower() == "t":
            starts.append(int(address, 16))
            names.append(symbol)
    return starts, names


def samples(data: Path) -> Counter[tuple[str, str]]:
    """Sample counts by (dso, symbol or address) from ``perf report``."""
    report = subprocess.run(
        ["perf", "report", "-i", str(data), "--stdio", "--no-children", "-g", "none",
         "--sort", "dso,sym", "-F", "sample,dso,sym"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    counts: Counter[tuple[str, str]] = Counter()
    for line in report.stdout.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].isdigit():
            continue
        counts[(fields[1], fields[-1])] += int(fields[0])
    return counts


def family(dispatch: str) -> str:
    """``main$async_dispatch_12_matmul_like_Dx1024x1024_bf16xbf16xf32`` -> ``matmul_like``."""
    match = re.search(r"dispatch_\d+_([a-z0-9_]+?)(?:_D|_\d|$)", dispatch)
    if match is None:
        return dispatch
    return re.sub(r"(_(bf16|f16|f32|f64|i1|i8|i16|i32|i64))+$", "", match.group(1))


def attribute(counts: Counter[tuple[str, str]], starts: list[int], names: list[str]) -> Counter:
    """Samples by dispatch function (the library's) or HOST."""
    by_function: Counter[str] = Counter()
    for (dso, symbol), n in counts.items():
        if not dso.startswith("iree_dylib"):
            by_function[HOST] += n
            continue
        try:
            address = int(symbol, 16)
        except ValueError:
            by_function[symbol] += n
            continue
        index = bisect.bisect_right(starts, address) - 1
        by_function[names[index] if index >= 0 else HOST] += n
    return by_function


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="0.35b", choices=SIZES)
    parser.add_argument("--recipes", nargs="+", default=["none", "fp8-current"])
    parser.add_argument("--work", default="/tmp/qmlir-llm", help="checkpoints and artifacts")
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--max-seq", type=int, default=256)
    parser.add_argument(
        "--phase",
        default="decode",
        choices=("decode", "prefill"),
        help="decode (default): one-token steps; prefill: prefills of the whole prompt",
    )
    parser.add_argument(
        "--malloc",
        default="retain",
        choices=("retain", "default"),
        help="retain (default): the generator's process keeps freed memory, as `qmlir generate` "
        "does; default: glibc's own (freed buffers page-faulted in again at every step)",
    )
    parser.add_argument(
        "--recompile",
        action="store_true",
        help="compile every artifact again (else one found in --work from an earlier run is "
        "reused: an older compiler's, after a change)",
    )
    args = parser.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("profile_decode: no 'perf' on PATH")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    folder = work / f"llama-{args.size}"
    if not (folder / "config.json").is_file():
        write_checkpoint(folder, args.size)
    what = "decode steps" if args.phase == "decode" else "prefills"
    print(
        f"{args.size}, batch 1, a {args.prompt}-token prompt, {args.steps} {what} sampled, "
        f"malloc: {args.malloc}"
    )
    for recipe in args.recipes:
        artifact = work / f"prof-{args.size}.{recipe}.vmfb"
        if args.recompile or not artifact.is_file():
            compile_generator(folder, recipe, artifact, args.max_seq)
        data = artifact.with_suffix(".perf.data")
        step = record(artifact, args.prompt, args.steps, data, args.malloc, args.phase)
        by_function = attribute(samples(data), *library_symbols(artifact))
        total = sum(by_function.values())
        unit = "step" if args.phase == "decode" else "prefill"
        print(f"\n## {recipe}: {args.phase} {step * 1e3:.1f} ms wall, {total} samples")
        print_tables(by_function, args.steps, unit, 10)


def print_tables(by_function: Counter[str], calls: int, unit: str, top: int) -> None:
    """CPU time by dispatch family and the ``top`` costliest dispatches, per ``unit`` (one of
    ``calls``), as markdown tables."""
    total = sum(by_function.values())
    cpu_ms = 1e3 / FREQUENCY / calls  # CPU ms per unit of one sample
    families: Counter[str] = Counter()
    for name, n in by_function.items():
        families[HOST if name == HOST else family(name)] += n
    print(f"| dispatch family | share of CPU time | CPU ms per {unit} |")
    print("|---|---|---|")
    for name, n in families.most_common():
        print(f"| {name} | {100 * n / total:.1f}% | {n * cpu_ms:.1f} |")
    print(f"\n| costliest dispatches | share | CPU ms per {unit} |")
    print("|---|---|---|")
    for name, n in [(k, v) for k, v in by_function.most_common() if k != HOST][:top]:
        print(f"| `{name}` | {100 * n / total:.1f}% | {n * cpu_ms:.2f} |")


if __name__ == "__main__":
    main()
