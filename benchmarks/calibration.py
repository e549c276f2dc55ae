"""Static activation scales by calibration method: max, percentile, mse, against dynamic scaling.

For MiniLM (real weights; calibrated on the sample's 8 sentences, measured on 8 others) and the
decoder sample (calibrated on one batch of token ids, measured on another), each recipe that
takes static scales (fp8-current; nvfp4's global scale) is compiled once per method and run on
the held-out inputs. Printed per row: cosine of the outputs against the f32 model (mean and
worst row), and the share of the held-out activations past the calibrated range (mean over the
layers and the worst layer), measured in torch on the f32 model's activations.

    .venv/bin/python benchmarks/calibration.py [--models minilm,decoder]
"""

from __future__ import annotations

import argparse
import platform
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

import compiler
from samples import decoder_lm, minilm

HELD_OUT = [
    "Rivers carry sediment from the mountains to the sea.",
    "The library opens at nine on weekdays.",
    "Neural networks learn features from examples.",
    "He painted the fence a bright shade of green.",
    "Interest rates rose for the third month in a row.",
    "Bees communicate the location of flowers by dancing.",
    "The train was delayed by heavy snow.",
    "Quantum computers exploit superposition and entanglement.",
]
METHODS: list[tuple[str, dict[str, Any]]] = [
    ("dynamic", {}),
    ("max", {"method": "max"}),
    ("percentile 99.99", {"method": "percentile", "percentile": 99.99}),
    ("percentile 99.9", {"method": "percentile", "percentile": 99.9}),
    ("mse", {"method": "mse"}),
]
DIVISORS = {"fp8-current": 448.0, "nvfp4": 448.0 * 6.0}


def _clipped(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], ranges: dict) -> list:
    """Each calibrated linear's share of held-out input elements past its range."""
    shares: list[float] = []

    def hook(name: str) -> Any:
        def pre(module: torch.nn.Module, args: tuple[Any, ...]) -> None:
            x = args[0].detach().float().abs()
            shares.append(float((x > ranges[name]).float().mean()))

        return pre

    handles = [
        m.register_forward_pre_hook(hook(n))
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and n in ranges
    ]
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return shares


def row_cosines(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Each row's (first dim's) cosine similarity of ``got`` with ``want``."""
    got, want = got.reshape(len(got), -1), want.reshape(len(want), -1)
    return (got * want).sum(-1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)


def _run(
    name: str,
    model: torch.nn.Module,
    calibration: tuple[torch.Tensor, ...],
    held_out: tuple[torch.Tensor, ...],
) -> None:
    with torch.no_grad():
        reference = model(*held_out).float().numpy()
    print(f"\n{name}: held-out cosine against f32, held-out activations past the range")
    print("| recipe | scales | cosine mean | cosine worst | past range mean | worst layer |")
    print("| --- | --- | --- | --- | --- | --- |")
    for recipe in ("fp8-current", "nvfp4"):
        for label, kwargs in METHODS:
            if label == "mse" and recipe != "fp8-current":
                continue
            scales = None
            clipped = "-", "-"
            if kwargs:
                raw = compiler.calibrate(model, [calibration], recipe=recipe, **kwargs)
                ranges = {layer: v * DIVISORS[recipe] for layer, v in raw.items()}
                shares = _clipped(model, held_out, ranges)
                clipped = f"{100 * np.mean(shares):.4f}%", f"{100 * np.max(shares):.3f}%"
                scales = raw
            art = compiler.compile(model, held_out, recipe, activation_scales=scales)
            cos = row_cosines(art(*[t.numpy() for t in held_out]), reference)
            print(
                f"| {recipe} | {label} | {cos.mean():.5f} | {cos.min():.5f} | "
                f"{clipped[0]} | {clipped[1]} |"
            )


def held_out_models(description: str) -> Iterator[tuple[str, torch.nn.Module, tuple, tuple]]:
    """The command line's models, each as (name, model, calibration inputs, held-out inputs):
    MiniLM on the sample's sentences and 8 others, the decoder sample on two batches of ids."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--models", default="minilm,decoder")
    args = parser.parse_args()
    torch.set_num_threads(2)
    print(f"host: {platform.processor() or platform.machine()}, torch threads 2")
    models = args.models.split(",")
    if "minilm" in models:
        model, calibration = minilm.build(batch=8, seq_len=128)
        _, held_out = minilm.build(batch=8, seq_len=128, sentences=HELD_OUT)
        yield "MiniLM (real weights), 8 x 128", model, calibration, held_out
    if "decoder" in models:
        model = decoder_lm.NextTokenLogits(decoder_lm.make_lm()).eval()
        calibration = (decoder_lm.token_ids(8, 64, seed=1),)
        held_out = (decoder_lm.token_ids(8, 64, seed=2),)
        yield "decoder sample, 8 x 64", model, calibration, held_out


def main() -> None:
    for name, model, calibration, held_out in held_out_models(__doc__.split("\n")[0]):
        _run(name, model, calibration, held_out)


if __name__ == "__main__":
    main()
