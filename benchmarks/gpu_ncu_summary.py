"""The GPU time of each benchmark of a ``gpu_check_run.py --mark --repeat R --only bench`` run
under Nsight Compute, without the host's share of a call (IREE's invocation, output allocation):

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,\\
        dram__bytes_write.sum python3 benchmarks/gpu_check_run.py --dir build/gpu-check \\
        --only bench --repeat 1 --mark > ncu.csv
    python benchmarks/gpu_ncu_summary.py ncu.csv --dir build/gpu-check --calls 2

``--mark`` launches torch's ``spin_kernel`` before each artifact; the kernels between two marks
are one artifact's ``calls`` calls (one untimed call and ``--repeat`` timed ones). The first
segment holds the device-to-device copy that ``gpu_check_run`` measures first: its bandwidth
under the same profiler is the reference. Prints per artifact: the GPU time of one call (the sum
of its kernels), GB/s (quantize: ``bytes`` of the manifest) or TFLOP/s (GEMMs), the fraction of
the copy, and the DRAM bytes the profiler counted.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

SEPARATOR = "spin_kernel"
COPY_KERNEL = "copy"
COPY_BYTES = 2 * 8192 * 8192 * 2  # gpu_check_run.copy_gbps: bf16 8192x8192 read and written


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
    args = parser.parse_args()
    manifest = json.loads((args.dir / "manifest.json").read_text())
    entries = [e for e in manifest["entries"] if e["name"].startswith(args.only)]
    segments: list[list[tuple[str, dict[str, float]]]] = [[]]
    for launch in kernels(args.csv):
        if SEPARATOR in launch[0]:
            segments.append([])
        else:
            segments[-1].append(launch)
    head, segments = segments[0], segments[1:]
    if len(segments) != len(entries):
        raise SystemExit(f"{len(segments)} marked segments for {len(entries)} artifacts")
    copies = [(n, m) for n, m in head if COPY_KERNEL in n.lower() and "normal" not in n]
    copy = None
    if copies:
        copy = COPY_BYTES / copies[-1][1]["gpu__time_duration.sum"]
        print(f"{'copy (torch, bf16 8192x8192)':<34}  {copy:8.0f} GB/s  (read + written)")
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
            figure = ""
        kinds = len({name for name, _ in launches})
        print(
            f"{entry['name']:<34}  {ns / 1e3:8.1f} us  {figure}  "
            f"(DRAM {dram / 1e6:.0f} MB, {len(launches) // args.calls} kernels, {kinds} kinds)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
