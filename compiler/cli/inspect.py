"""``qmlir inspect``: what a .vmfb holds. Needs only the runtime (no torch, no iree.compiler)."""

from __future__ import annotations

import argparse
from typing import Any

from compiler.cli.common import human_size, print_layers, print_table
from compiler.runtime import read_artifact
from compiler.runtime.input_check import shape_text
from passes.base.cpu_features import X86_CPUINFO_FLAGS, host_problem

NAME = "inspect"
HELP = "what a .vmfb holds: recipe, layers, weights, versions"


def add_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("artifact", help="a .vmfb written by qmlir compile")


def print_cpu(cpu: dict[str, Any]) -> None:
    """The CPU an llvm-cpu artifact is compiled for, its instruction-set features (the ones the
    runtime checks) and whether this host has them."""
    checked = [f for f in cpu["features"] if f in X86_CPUINFO_FLAGS]
    print(f"cpu       {cpu['name']} ({cpu['arch']}, from --cpu {cpu['requested']})")
    print(f"          needs {' '.join(checked) or 'the baseline instruction set only'}")
    problem = host_problem(cpu)
    print(f"          {'runs on this host' if problem is None else 'NOT on this host: ' + problem}")


def _describe_tensor(spec: dict[str, Any]) -> str:
    """``input_ids: si64[1, 16] in 0..30521``."""
    text = f"{spec['dtype']}{shape_text(spec)}"
    if "index_range" in spec:
        low, high = spec["index_range"]
        text += f" in {low}..{high - 1}"
    return f"{spec['name']}: {text}" if spec.get("name") else text


def _count(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def run(args: argparse.Namespace) -> int:
    artifact = read_artifact(args.artifact)  # verified, and nothing of it loaded, let alone run
    meta = artifact.metadata
    recipe = meta["recipe"]
    options = ", ".join(f"{k}={v}" for k, v in recipe["options"].items()) or "no options"
    print(f"artifact  {args.artifact} ({human_size(len(artifact.data))})")
    print(f"sha256    {artifact.digest} (verified)")
    print(f"built by  qmlir {meta['qmlir_version']}, IREE {meta['iree_version']}")
    print(f"model     {meta['model']}")
    arch = f" ({meta['cuda_arch']})" if meta.get("cuda_arch") else ""
    print(f"target    {meta['target']}{arch}")
    if meta.get("cpu"):
        print_cpu(meta["cpu"])
    if meta.get("attention"):
        print(f"attention {meta['attention']}")
    if meta.get("gemm_operands"):
        print(f"gemms     scaled GEMMs on {meta['gemm_operands']} operands, f32 sums")
    print(f"recipe    {recipe['name']} ({options})")
    training = meta.get("training")
    if training:
        opt = ", ".join(f"{k}={v}" for k, v in training["optimizer"].items() if k != "name")
        print(f"training  one step per call: {training['optimizer']['name']} ({opt})")
        print(
            f"          {len(training['parameters'])} parameters "
            f"({sum(_count(p['shape']) for p in training['parameters']):,} values), "
            f"{len(training['optimizer_state'])} optimizer state tensors"
        )
    if meta.get("quantize_all_matmuls"):
        print("          activation x activation matmuls quantized too")

    def describe(specs: list[dict[str, Any]]) -> str:
        return ", ".join(_describe_tensor(s) for s in specs)

    sig = meta["signature"]
    print("\nfunctions")
    print(f"  main({describe(sig['inputs'])}) -> ({describe(sig['outputs'])})")
    for name in meta["functions"]:
        if name != "main":
            print(f"  {name}")
    layers = meta["layers"]
    print(f"\nmatmuls ({len(layers)})")
    print_layers(layers)
    weights = meta.get("weights", {})
    if weights:
        print("\nconstant bytes by format")
        print_table([("format", "bytes"), *[(k, human_size(v)) for k, v in weights.items()]])
    state = meta.get("scaling_state", [])
    if state:
        keys = {e["key"] for e in state}
        print(f"\nscaling state: {len(keys)} tensor(s), amax history and scale each")
    return 0
