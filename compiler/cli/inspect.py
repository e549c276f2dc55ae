"""``qmlir inspect``: what a .vmfb holds. Needs only the runtime (no torch, no iree.compiler)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from compiler.cli.common import human_size, print_layers, print_table
from compiler.runtime import read_artifact
from compiler.runtime.input_check import shape_text
from compiler.runtime.metadata import Parameters
from compiler.runtime.parameters import parameters_beside, safetensors_header
from compiler.runtime.summary import convolution_text
from passes.base.abi import DECODE
from passes.base.cpu_features import X86_CPUINFO_FLAGS, host_problem
from passes.base.target import Cpu

NAME = "inspect"
HELP = "what a .vmfb holds: recipe, layers, weights, versions"


def add_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("artifact", help="a .vmfb written by qmlir compile")


def print_cpu(cpu: Cpu) -> None:
    """The CPU an llvm-cpu artifact is compiled for, its instruction-set features (the ones the
    runtime checks) and whether this host has them."""
    checked = [f for f in cpu.features if f in X86_CPUINFO_FLAGS]
    print(f"cpu       {cpu.name} ({cpu.arch}, from --cpu {cpu.requested})")
    print(f"          needs {' '.join(checked) or 'the baseline instruction set only'}")
    problem = host_problem(cpu.to_json())
    print(f"          {'runs on this host' if problem is None else 'NOT on this host: ' + problem}")


def _describe_tensor(spec: dict[str, Any]) -> str:
    """``input_ids: si64[1, 16] in 0..30521``."""
    text = f"{spec['dtype']}{shape_text(spec)}"
    if "index_range" in spec:
        low, high = spec["index_range"]
        text += f" in {low}..{high - 1}"
    return f"{spec['name']}: {text}" if spec.get("name") else text


def _one_token(spec: dict[str, Any]) -> dict[str, Any]:
    """A generator's ``input_ids`` spec as ``@decode`` takes it: its tokens dim at 1."""
    if spec.get("name") != "input_ids" or not spec.get("dims"):
        return spec
    dims = [None if d and d.get("name") == "tokens" else d for d in spec["dims"]]
    shape = [
        1 if d and d.get("name") == "tokens" else s
        for s, d in zip(spec["shape"], spec["dims"], strict=True)
    ]
    return {**spec, "shape": shape, "dims": dims}


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _print_parameters(artifact: Path, record: Parameters) -> None:
    """The parameter file the artifact reads: as sealed, and what is beside the artifact now
    (its header only: checking the bytes is ``qmlir run``'s, on load)."""
    beside = parameters_beside(artifact)
    print("\nparameters (weights outside the module)")
    print(f"  sealed    '{record.file}', {human_size(record.nbytes)}, {record.tensors} tensors")
    print(f"  sha256    {record.sha256}")
    if not beside.is_file():
        print(f"  {beside}: not found (qmlir run takes --parameters PATH)")
        return
    size = beside.stat().st_size
    state = "size matches" if size == record.nbytes else f"{size} bytes: does NOT match"
    print(f"  file      {beside} ({state})")
    try:
        header = safetensors_header(beside)
    except ValueError as e:
        print(f"  unreadable: {e}")
        return
    formats = Counter(entry["dtype"] for entry in header.values())
    print("  tensors   " + ", ".join(f"{n} {dtype}" for dtype, n in formats.most_common()))
    print(
        f"  run with  iree-run-module --module={artifact} "
        f"--parameters=model={beside} --function=main --input=..."
    )


def run(args: argparse.Namespace) -> int:
    artifact = read_artifact(args.artifact)  # verified, and nothing of it loaded, let alone run
    meta = artifact.record
    recipe = meta.recipe
    options = ", ".join(f"{k}={v}" for k, v in recipe["options"].items()) or "no options"
    print(f"artifact  {args.artifact} ({human_size(len(artifact.data))})")
    print(f"sha256    {artifact.digest} (verified)")
    print(f"built by  qmlir {meta.qmlir_version}, IREE {meta.iree_version}")
    print(f"model     {meta.model}")
    arch = f" ({meta.target.cuda_arch})" if meta.target.cuda_arch else ""
    print(f"target    {meta.target.device}{arch}")
    if meta.target.cpu is not None:
        print_cpu(meta.target.cpu)
    if meta.attention:
        print(f"attention {meta.attention}")
    if meta.gemm_operands:
        print(f"gemms     scaled GEMMs on {meta.gemm_operands} operands, f32 sums")
    print(f"recipe    {recipe['name']} ({options})")
    training = meta.training
    if training is not None:
        opt = ", ".join(f"{k}={v}" for k, v in training.optimizer.items() if k != "name")
        print(f"training  one step per call: {training.optimizer['name']} ({opt})")
        print(
            f"          {len(training.parameters)} parameters "
            f"({sum(_count(p.shape) for p in training.parameters):,} values), "
            f"{len(training.optimizer_state)} optimizer state tensors"
        )
    generation = meta.generation
    if generation is not None:
        caches = [b for b in meta.buffers if b.name.startswith(("key_cache_", "value_cache_"))]
        cache = sum(_count(b.shape) for b in caches)
        print(
            f"generator {generation.max_seq} positions x {generation.max_batch} sequences, "
            f"vocabulary {generation.vocab}, end ids {list(generation.eos_token_ids)}"
        )
        print(
            f"          KV cache in the module: {generation.layers} layers, "
            f"{generation.cache_dtype} ({_kv_text(generation.kv_cache)}), {cache:,} values; "
            "run it with "
            "qmlir generate"
        )
        tokenizer = generation.tokenizer
        print(
            f"          tokenizer stored ({', '.join(sorted(tokenizer))}): --prompt TEXT works"
            if tokenizer is not None
            else "          no tokenizer stored: prompts as --prompt-ids"
        )
    elif meta.buffers:
        print(f"buffers   {', '.join(b.name for b in meta.buffers)} (held across calls)")
    if meta.quantize_all_matmuls:
        print("          activation x activation matmuls quantized too")

    def describe(specs: list[dict[str, Any]]) -> str:
        return ", ".join(_describe_tensor(s) for s in specs)

    sig = meta.signature
    print("\nfunctions")
    print(f"  main({describe(sig['inputs'])}) -> ({describe(sig['outputs'])})")
    for name in meta.functions:
        if name == DECODE:  # a generator's: main with one token a call, its shapes static
            one = [_one_token(spec) for spec in sig["inputs"]]
            print(f"  {name}({describe(one)}) -> ({describe(sig['outputs'])}): a decode step")
        elif name != "main":
            print(f"  {name}")
    print(f"\nmatmuls ({len(meta.layers)})")
    print_layers([layer.to_json() for layer in meta.layers])
    if meta.convolutions:
        print(f"\n{convolution_text(meta.convolutions)}")
    if meta.weights:
        where = "in the parameter file" if meta.parameters else "in the module"
        print(f"\nweight bytes by format ({where})")
        print_table([("format", "bytes"), *[(k, human_size(v)) for k, v in meta.weights.items()]])
    if meta.parameters is not None:
        _print_parameters(Path(args.artifact), meta.parameters)
    if meta.scaling_state:
        keys = {e.key for e in meta.scaling_state}
        print(f"\nscaling state: {len(keys)} tensor(s), amax history and scale each")
    return 0


def _kv_text(kv_cache: str) -> str:
    return "fp8: an E8M0 scale per 32 values" if kv_cache == "fp8" else kv_cache
