"""Training steps of transformers language models at 8 x 32 tokens under every training recipe
(issue 30, item 3): does each compile, and does it train like torch?

    python benchmarks/training_families.py [--models qwen2 gpt2] [--recipes none fp8-current ...]

Each model is a fresh random one-layer config (vocabulary 256, width 64; GPT-2 untied), under
`LanguageModelLoss` (next-token cross-entropy), three SGD steps (lr 0.05) on one batch. Prints a
Markdown table: compile time, torch's f32 loss, the step's three losses, the first loss's
relative difference from torch's, and how many of the step's GEMMs the recipe quantized.
`make test` trains both models under fp8-current (tests/e2e/test_training.py); this covers
the other recipes (each compile takes 15-35 s on 2 cores).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "fp8-rowwise")


def row(name: str, recipe: str) -> str:
    import torch

    import compiler
    from samples.decoder_lm import training_lm

    torch.manual_seed(0)
    model = training_lm(name)
    ids = torch.randint(0, 256, (8, 32))
    labels = torch.roll(ids, -1, 1)
    with torch.no_grad():
        want = float(model(ids, labels))
    start = time.perf_counter()
    try:
        step = compiler.compile_training(model, (ids, labels), recipe, lr=0.05)
    except Exception as e:  # a recipe that fails to compile is a row, not the end of the run
        return f"| {name} | {recipe} | failed: {str(e).splitlines()[0][:120]} | | | | |"
    seconds = time.perf_counter() - start
    losses = [float(step(ids.numpy(), labels.numpy())) for _ in range(3)]
    gemms = step.record.layers
    quantized = sum(layer.recipe != "none" for layer in gemms)
    shown = ", ".join(f"{loss:.4f}" for loss in losses)
    return (
        f"| {name} | {recipe} | {seconds:.1f} | {want:.4f} | {shown} | "
        f"{abs(losses[0] - want) / want:.1e} | {quantized}/{len(gemms)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["qwen2", "gpt2"], choices=["qwen2", "gpt2"])
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=RECIPES)
    args = parser.parse_args()
    from passes.base.cpu_features import host_flags

    flags = host_flags() or set()
    avx = ", ".join(sorted(f for f in flags if f in ("avx2", "avx512f", "avx512_bf16"))) or "?"
    print(f"host: {platform.machine()} ({avx}), 8 x 32 tokens, 3 SGD steps")
    print(
        "| model | recipe | compile s | torch f32 loss | step losses | first vs torch "
        "| GEMMs quantized |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.models:
        for recipe in args.recipes:
            print(row(name, recipe), flush=True)


if __name__ == "__main__":
    main()
