"""Training benchmark: torch eager f32 training against compiled training steps of every recipe,
on the same model, seed and data, measured in one run.

    python benchmarks/training.py [--steps 300] [--tasks mlp transformer] [--plot-dir benchmarks]

Tasks: ``mlp`` is samples/mlp.py's model (10 x 1024, batch 32) learning a random teacher MLP
of its shape with label noise 0.5 (the best loss is 0.25); ``transformer`` is a small
transformer block (width 128, 4 heads, batch 8 x 32 tokens) and a head learning each token's
vector mixed with its sequence's mean, noise 0.5 (samples/transformer_block.py). A fresh batch
every step (no batch repeats: the loss is the population loss), AdamW, the same initial
parameters everywhere. Each variant trains in a fresh child process (the compiled steps with
the runtime only, torch eager with torch), which reports its per-step losses, step times and
peak RSS. Prints a Markdown table per task: final loss (mean of the last 25 steps) against torch
f32, median step time and its ratio to torch's, peak RSS; writes the loss curves as PNGs
(needs the ``bench`` extra: matplotlib).
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from peak_rss import peak_mb  # noqa: E402

# label → (recipe, recipe options)
VARIANTS = {
    "qmlir none (f32)": ("none", {}),
    "fp8-current e4m3": ("fp8-current", {}),
    "fp8-current hybrid": ("fp8-current", {"fp8_format": "hybrid"}),
    "fp8-delayed hybrid": ("fp8-delayed", {"fp8_format": "hybrid"}),
    "fp8-block hybrid": ("fp8-block", {"fp8_format": "hybrid"}),
    "mxfp8 hybrid": ("mxfp8", {"fp8_format": "hybrid"}),
}
TASKS = {"mlp": 1e-3, "transformer": 3e-3}  # task → AdamW learning rate
TAIL = 25  # the final loss: mean of the last TAIL steps


def _task(name: str, steps: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """The model (torch, initial parameters) and ``steps`` batches ``x, y`` of a task."""
    if name == "mlp":
        from samples.mlp import build_train, regression_batches

        model, _ = build_train()
        xs, ys = regression_batches(steps)
    else:
        from samples.transformer_block import build_train, sequence_batches

        model, _ = build_train()
        xs, ys = sequence_batches(steps)
    return model, xs.numpy(), ys.numpy()


def _train_compiled(vmfb: str, data: str, steps: int, out: Any) -> None:
    """In a child: the compiled step over the batches (the runtime only, no torch)."""
    from compiler.runtime import load

    baseline = peak_mb()
    step = load(vmfb)
    xs, ys = np.load(f"{data}/x.npy", mmap_mode="r"), np.load(f"{data}/y.npy", mmap_mode="r")
    losses, times = [], []
    for i in range(steps):
        x, y = np.ascontiguousarray(xs[i]), np.ascontiguousarray(ys[i])
        start = time.perf_counter()
        loss = step.run_numpy(x, y)[0]
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    out.put((losses, times, peak_mb(), baseline))


def _train_torch(task: str, data: str, steps: int, lr: float, out: Any) -> None:
    """In a child: torch eager f32 training of the same model on the same batches."""
    import torch

    baseline = peak_mb()
    model, _, _ = _task(task, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    xs, ys = np.load(f"{data}/x.npy", mmap_mode="r"), np.load(f"{data}/y.npy", mmap_mode="r")
    losses, times = [], []
    for i in range(steps):
        x, y = torch.from_numpy(np.array(xs[i])), torch.from_numpy(np.array(ys[i]))
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    out.put((losses, times, peak_mb(), baseline))


def _in_child(target: Any, *args: Any) -> tuple[list[float], list[float], float, float]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=target, args=(*args, queue))
    child.start()
    result = queue.get()
    child.join()
    return result  # type: ignore[no-any-return]


def run_task(task: str, steps: int, work: Path) -> dict[str, Any]:
    import compiler

    lr = TASKS[task]
    model, xs, ys = _task(task, steps)
    data = work / task
    data.mkdir(parents=True, exist_ok=True)
    np.save(data / "x.npy", xs)
    np.save(data / "y.npy", ys)
    results = {"torch eager f32": _in_child(_train_torch, task, str(data), steps, lr)}
    compile_s = {}
    for label, (recipe, options) in VARIANTS.items():
        start = time.perf_counter()
        step = compiler.compile_training(
            model, (model_input(xs), model_input(ys)), recipe, optimizer="adamw", lr=lr, **options
        )
        compile_s[label] = time.perf_counter() - start
        path = work / f"{task}.{recipe}.{len(compile_s)}.vmfb"
        step.save(path)
        results[label] = _in_child(_train_compiled, str(path), str(data), steps)
        print(f"  {task}: {label} done", file=sys.stderr, flush=True)
    return {"results": results, "compile_s": compile_s, "lr": lr}


def model_input(batches: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.array(batches[0]))


def table(task: str, measured: dict[str, Any]) -> list[str]:
    results = measured["results"]
    ref_losses, ref_times, _, _ = results["torch eager f32"]
    ref_final = float(np.mean(ref_losses[-TAIL:]))
    ref_ms = 1e3 * float(np.median(ref_times[1:]))
    rows = [
        f"| {task} | variant | final loss | vs torch f32 | ms/step | vs torch | peak RSS MB "
        "(after imports) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, (losses, times, peak, base) in results.items():
        final = float(np.mean(losses[-TAIL:]))
        ms = 1e3 * float(np.median(times[1:]))
        rows.append(
            f"| | {label} | {final:.4f} | {100 * (final / ref_final - 1):+.2f}% | {ms:.2f} | "
            f"{ms / ref_ms:.2f}x | {peak:.0f} ({base:.0f}) |"
        )
    return rows


def plot(task: str, measured: dict[str, Any], steps: int, directory: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install '.[bench]'): no plot", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    window = min(10, steps)
    for label, (losses, _, _, _) in measured["results"].items():
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, len(losses) + 1), smooth, label=label, linewidth=1.2)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(f"loss (mean of {window} steps)")
    ax.set_title(f"{task}: AdamW lr {measured['lr']:g}, {steps} steps, fresh batch each step")
    ax.legend()
    ax.grid(True, alpha=0.3)
    path = directory / f"training_{task}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--plot-dir", type=Path, default=ROOT / "benchmarks")
    args = parser.parse_args()
    host = platform.processor() or platform.machine()
    print(f"host: {host}, {multiprocessing.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="qmlir-train-bench-") as tmp:
        for task in args.tasks:
            measured = run_task(task, args.steps, Path(tmp))
            print()
            print("\n".join(table(task, measured)))
            compile_s = ", ".join(f"{k} {v:.1f} s" for k, v in measured["compile_s"].items())
            print(f"\ncompile times ({task}): {compile_s}")
            path = plot(task, measured, args.steps, args.plot_dir)
            if path is not None:
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                print(f"loss curves: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
