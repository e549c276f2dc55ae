"""Text generation of a Llama of real size on a GPU: qmlir's generators (weights in a parameter
file) against transformers' ``generate`` in torch eager bf16 on the same GPU, and the bound that
reading the weights once per token sets.

A parameter file of a 1B model is over what a device call can carry (64 MiB), so the weights
travel as their layout alone: here (no GPU), ``build`` writes a random bf16 checkpoint folder of
``--size`` (``benchmarks/llm_scale.py``), compiles a generator for cuda per recipe, and keeps
each artifact with its parameter file's safetensors header (names, dtypes, shapes), not the
file. There (``iree-base-runtime``, numpy, torch, transformers; ``PYTHONPATH`` at the
repository), ``run`` writes each parameter file again from its header with random values of the
same dtypes (E4M3 codes never NaN, block scales and high-precision weights small and finite),
times a prefill and greedy decode steps, and times transformers' ``generate`` (KV cache, greedy)
of the same configuration with random bf16 weights. Random weights give the speed, not the
accuracy (``benchmarks/llm_scale.py`` measures that on the CPU).

    python benchmarks/gpu_probes/llm_decode.py build --dir build/llm-decode --size 1.1b
    python benchmarks/gpu_probes/llm_decode.py run --dir build/llm-decode
    ncu --csv --metrics gpu__time_duration.sum \
        python benchmarks/gpu_probes/llm_decode.py profile --dir build/llm-decode --steps 2

``build --one-token`` builds probe generators whose calls take exactly one token (static
shapes: IREE records their command buffer once); ``run`` feeds them the prompt a token a call.
``run`` reads IREE's cuda flags from ``IREE_CUDA_FLAGS`` (``--cuda_use_streams=false``: CUDA
graphs) and leaves torch out under ``NO_TORCH=1``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ("fp8-block", "fp8-current", "fp8-rowwise", "mxfp8", "nvfp4", "none")
MAX_SEQ, PROMPT, NEW = 256, 16, 64
FLOAT_DTYPES = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32}


def _header(path: Path) -> bytes:
    """A safetensors file's header as stored: its 8-byte length and its JSON."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return struct.pack("<Q", length) + f.read(length)


def build(out: Path, size: str, recipes: list[str], one_token: bool = False) -> int:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import llm_scale

    import compiler

    if one_token:
        _one_token_export()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "llama"
        llm_scale.write_checkpoint(folder, size)
        shutil.copy(folder / "config.json", out / "config.json")
        for recipe in recipes:
            t0 = time.perf_counter()
            gen = compiler.compile_generator(
                folder, recipe=recipe, target="cuda", cuda_arch="sm_90", max_seq_len=MAX_SEQ
            )
            name = f"{size}-{'one-token-' if one_token else ''}{recipe}"
            gen.save(out / f"{name}.vmfb")
            params = out / f"{name}.params.safetensors"
            (out / f"{name}.params.header").write_bytes(_header(params))
            print(
                f"built {name}: {(out / f'{name}.vmfb').stat().st_size / 1e6:.1f} MB artifact, "
                f"{params.stat().st_size / 1e9:.2f} GB of parameters (not kept), "
                f"{time.perf_counter() - t0:.0f} s",
                flush=True,
            )
            params.unlink()
    return 0


def _one_token_export() -> None:
    """Generators built from here on take exactly one token a call (``build --one-token``):
    ``compile_generator``'s export with the token count static at 1, a probe of what a decode
    step with static shapes gains (IREE records the command buffer of a static call once and
    replays it). The prompt then goes in one token a call. Not a product path: a generator's
    ``@main`` takes any number of tokens, its ``@decode`` one (``passes/add_decode_step.py``)."""
    import types

    import torch

    from compiler.pipeline import generation

    def zeros(shape: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is torch.int64 and isinstance(shape, tuple) and len(shape) == 2:
            shape = (shape[0], 1)  # the example call: one token
        return torch.zeros(shape, **kwargs)

    export = types.SimpleNamespace(Dim=lambda name, **kw: None)
    generation.torch = types.SimpleNamespace(zeros=zeros, int64=torch.int64, export=export)


def _values(dtype: str, shape: list[int], name: str, rng: np.random.Generator) -> bytes:
    """Random bytes of a tensor: codes for integer and FP8/FP4 dtypes (never an E4M3 NaN),
    small normal values (norm weights 1) for floating ones."""
    count = int(np.prod(shape)) if shape else 1
    if dtype in FLOAT_DTYPES:
        if dtype == "F32" and not name.endswith("weight"):  # a block or global scale
            return np.full(count, 2.0**-9, np.float32).tobytes()
        values = np.ones(count, np.float32) if name.endswith("norm.weight") else None
        if values is None:
            values = rng.standard_normal(count, dtype=np.float32) * np.float32(0.02)
        if dtype == "BF16":
            return (values.view(np.uint32) >> 16).astype(np.uint16).tobytes()
        return values.astype(FLOAT_DTYPES[dtype]).tobytes()
    codes = rng.integers(0, 0x7F, count, dtype=np.uint8)  # 0x7F (and 0xFF) is E4M3's NaN
    return (codes | (rng.integers(0, 2, count, dtype=np.uint8) << 7)).tobytes()


def _write_params(stored: bytes, path: Path, rng: np.random.Generator) -> int:
    """The parameter file again: its header as stored, then random values of each tensor."""
    header = json.loads(stored[8:])
    entries = sorted(
        ((k, v) for k, v in header.items() if k != "__metadata__"),
        key=lambda kv: kv[1]["data_offsets"][0],
    )
    with open(path, "wb") as f:
        f.write(stored)
        for name, info in entries:
            start, end = info["data_offsets"]
            data = _values(info["dtype"], info["shape"], name, rng)
            assert len(data) == end - start, (name, len(data), end - start)
            f.write(data)
    return path.stat().st_size


def _same_size(path: Path, record: Any) -> None:
    assert path.stat().st_size == record.nbytes, (path, path.stat().st_size, record.nbytes)


def _copy_gbs(torch: Any) -> float:
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    y.copy_(x)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        y.copy_(x)
    stop.record()
    torch.cuda.synchronize()
    return 2 * x.numel() * 4 * 10 / (start.elapsed_time(stop) * 1e-3) / 1e9


def _torch_decode(config: dict[str, Any], prompt: np.ndarray) -> tuple[float, float, int]:
    """transformers' greedy ``generate`` in bf16 on the GPU: ms per decoded token, prefill ms,
    and the model's parameter bytes."""
    import torch
    from cuda_paths import torch_generate_ms  # this script's folder is on the path
    from transformers import LlamaConfig, LlamaForCausalLM

    with torch.device("cuda"):
        lm = LlamaForCausalLM(LlamaConfig(**config)).to(torch.bfloat16).eval()
    decode, prefill = torch_generate_ms(lm, torch.from_numpy(prompt).cuda(), NEW, repeats=2)
    size = sum(p.numel() * p.element_size() for p in lm.parameters())
    return decode, prefill, size


def run(folder: Path) -> int:
    sys.path.insert(0, str(ROOT))
    import os

    import torch
    from iree.runtime import flags as iree_flags

    from compiler.runtime import load, module

    if os.environ.get("IREE_CUDA_FLAGS"):  # e.g. --cuda_use_streams=false (CUDA graphs)
        iree_flags.parse_flags(*os.environ["IREE_CUDA_FLAGS"].split())
    # the parameter files are random values in the sealed layout: their SHA-256 cannot match
    # the seal, which the runtime would refuse; the size and layout still have to
    module.verify_parameters = _same_size
    config = json.loads((folder / "config.json").read_text())
    embed = config["vocab_size"] * config["hidden_size"]  # one row of it is read per token
    prompt = np.random.default_rng(1).integers(3, config["vocab_size"], (1, PROMPT))
    prompt = prompt.astype(np.int64)
    copy = _copy_gbs(torch)
    print(f"copy (torch, f32 1 GiB, read + written): {copy:.0f} GB/s", flush=True)
    rows = []
    rng = np.random.default_rng(0)
    for header_file in sorted(folder.glob("*.params.header")):
        name = header_file.name.removesuffix(".params.header")
        header = header_file.read_bytes()
        params = folder / f"{name}.params.safetensors"
        try:
            total = _write_params(header, params, rng)
            embed_bytes = embed * (2 if name.endswith("-none") else 4)
            t0 = time.perf_counter()
            gen = load(folder / f"{name}.vmfb", device="cuda")
            gen.step(prompt[:, :1] if "-one-token-" in name else prompt, 0)
            loaded = time.perf_counter() - t0
            if "-one-token-" in name:
                _one_token(gen, prompt, 8)  # warm-up
                decode, prefill = _one_token(gen, prompt, NEW)
            else:
                gen.generate(prompt, max_new_tokens=8, eos_token_id=[])  # warm-up
                gen.generate(prompt, max_new_tokens=NEW, eos_token_id=[])
                stats = gen.last_stats
                assert stats is not None
                decode, prefill = stats.decode_s / (NEW - 1) * 1e3, stats.prefill_s * 1e3
            bound = max(total - embed_bytes, 0) / (copy / 2 * 1e9) * 1e3
            rows.append((name, decode, prefill, total, bound, loaded))
            print(f"{name}: {rows[-1]}", flush=True)
            del gen
        except Exception as e:  # noqa: BLE001 - a failing artifact is a row
            print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
        finally:
            params.unlink(missing_ok=True)
    if os.environ.get("NO_TORCH"):
        return 0
    decode, prefill, size = _torch_decode(config, prompt)
    torch_bound = (size - embed * 2) / (copy / 2 * 1e9) * 1e3
    rows.append(("torch eager bf16 generate", decode, prefill, size, torch_bound, float("nan")))
    print(f"\n{PROMPT}-token prompt, {NEW} greedy tokens; bound = weight bytes read once a token")
    print("(the embedding table left out) at the copy's read rate (half its read + written)")
    print(f"{'':28s} {'ms/token':>9s} {'prefill ms':>11s} {'weights GB':>11s} {'bound ms':>9s}")
    for label, dec, pre, nbytes, bnd, _ in rows:
        print(f"{label:28s} {dec:9.3f} {pre:11.3f} {nbytes / 1e9:11.2f} {bnd:9.3f}")
    return 0


def _one_token(gen: Any, prompt: np.ndarray, new: int) -> tuple[float, float]:
    """A one-token generator's greedy generation: the prompt a token a call, then ``new`` - 1
    decode steps; ms per decode step and ms for the prompt."""
    t0 = time.perf_counter()
    for i in range(prompt.shape[1]):
        logits = gen.step(prompt[:, i : i + 1], i)
    t1 = time.perf_counter()
    for n in range(new - 1):
        token = np.argmax(logits, axis=-1).astype(np.int64)
        logits = gen.step(token[:, None], prompt.shape[1] + n)
    t2 = time.perf_counter()
    return (t2 - t1) / (new - 1) * 1e3, (t1 - t0) * 1e3


def profile(folder: Path, name: str, steps: int) -> int:
    """A prefill and ``steps`` decode steps of one artifact and nothing else, for Nsight Compute
    (``ncu --metrics gpu__time_duration.sum``): a step's kernels are the last ``1/(steps+1)`` of
    its list, their count and GPU time to set against the step's wall time."""
    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load, module

    module.verify_parameters = _same_size
    params = folder / f"{name}.params.safetensors"
    _write_params((folder / f"{name}.params.header").read_bytes(), params, np.random.default_rng(0))
    gen = load(folder / f"{name}.vmfb", device="cuda")
    gen.step(np.arange(3, 3 + PROMPT, dtype=np.int64)[None], 0)
    for i in range(steps):
        gen.step(np.array([[5]], np.int64), PROMPT + i)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "run", "profile"))
    parser.add_argument("--dir", type=Path, default=Path("build/llm-decode"))
    parser.add_argument("--size", default="1.1b", choices=("0.35b", "1.1b", "8b"))
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES))
    parser.add_argument("--artifact", default="1.1b-fp8-current", help="profile: which one")
    parser.add_argument("--steps", type=int, default=2, help="profile: decode steps")
    parser.add_argument(
        "--one-token", action="store_true", help="build: generators of one token a call (a probe)"
    )
    args = parser.parse_args()
    if args.mode == "profile":
        return profile(args.dir, args.artifact, args.steps)
    if args.mode == "build":
        return build(args.dir, args.size, args.recipes, args.one_token)
    return run(args.dir)


if __name__ == "__main__":
    sys.exit(main())
