"""The GPU time of each benchmark of a ``gpu_check_run.py --mark --repeat R --only bench`` run
under Nsight Compute, without the host's share of a call (IREE's invocation, output allocation):

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,\\
        dram__bytes_write.sum python3 benchmarks/gpu_check_run.py --dir build/gpu-check \\
        --only bench --repeat 1 --mark > ncu.csv
    python benchmarks/gpu_ncu_summary.py ncu.csv --dir build/gpu-check --calls 2

``--mark`` launches torch's ``spin_kernel`` before each artifact; the kernels between two marks
are one artifact's ``calls`` calls (one untimed call and ``--repeat`` timed ones). Prints per
artifact: the GPU time of one call (the sum of its kernels), GB/s (quantize: ``bytes`` of the
manifest) or TFLOP/s (GEMMs), the fraction of ``--copy`` (the device-to-device copy measured by
``gpu_check_run`` in the same session), and the DRAM bytes the profiler counted.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

SEPARATOR = "spin_kernel"
OURS = ("qmlir_", "main_")  # runtime_kernels' entry points and IREE's own dispatches


def kernels(path: Path) -> list[tuple[str, dict[str, float]]]:
    """(kernel name, {metric: value}) per launch, in launch order."""
    launches: dict[str, tuple[str, dict[str, float]]] = {}
    with path.open(newline="") as f:
        for row in csv.reader(f):
            if len(row) < 15 or row[0] == "ID":
                continue
            name, metric, value = row[4], row[12], row[14]
            entry = launches.setdefault(row[0], (name, {}))
            entry[1][metric] = float(value.replace(",", ""))
    return [launches[k] for k in sorted(launches, key=int)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv", type=Path, help="ncu --csv output")
    parser.add_argument("--dir", type=Path, default=Path("build/gpu-check"))
    parser.add_argument("--calls", type=int, default=2, help="calls per artifact (1 + --repeat)")
    parser.add_argument("--only", default="bench", help="the run's --only")
    parser.add_argument(
        "--copy",
        type=float,
        help="the device-to-device copy's GB/s that gpu_check_run measured in the same session "
        "(torch's copy_ is a cudaMemcpy, which the profiler does not see)",
    )
    args = parser.parse_args()
    manifest = json.loads((args.dir / "manifest.json").read_text())
    entries = [e for e in manifest["entries"] if e["name"].startswith(args.only)]
    segments: list[list[tuple[str, dict[str, float]]]] = [[]]
    for launch in kernels(args.csv):
        if SEPARATOR in launch[0]:
            segments.append([])
        elif launch[0].startswith(OURS):  # not the torch baselines' kernels
            segments[-1].append(launch)
    segments = segments[1:]  # before the first mark: gpu_check_run's set-up
    if len(segments) != len(entries):
        raise SystemExit(f"{len(segments)} marked segments for {len(entries)} artifacts")
    copy = args.copy
    if copy:
        print(f"{'copy (torch, bf16 8192x8192)':<34}  {copy:8.0f} GB/s  (--copy: cudaMemcpy, wall)")
    for entry, launches in zip(entries, segments, strict=True):
        ns = sum(m["gpu__time_duration.sum"] for _, m in launches) / args.calls
        dram = sum(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"] for _, m in launches)
        dram /= args.calls
        if entry["kind"] == "bench_quantize":
            rate = entry["bytes"] / ns
            versus = f"{rate / copy:4.0%} of copy" if copy else ""
            figure = f"{rate:8.0f} GB/s  {versus}"
        elif entry["kind"] == "bench_gemm":
            m, n, k = entry["shape"]
            figure = f"{2 * m * n * k / ns / 1e3:8.1f} TFLOP/s"
        else:
            continue  # a check, not a benchmark
        kinds = len({name for name, _ in launches})
        print(
            f"{entry['name']:<34}  {ns / 1e3:8.1f} us  {figure}  "
            f"(DRAM {dram / 1e6:.0f} MB, {len(launches) // args.calls} kernels, {kinds} kinds)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
