"""The cuda paths gpu-check does not cover: dynamic-shape artifacts, training steps and
mixture-of-experts models, each checked against the same artifact compiled for llvm-cpu.

Here (no GPU): ``python benchmarks/gpu_probes/cuda_paths.py build --dir build/cuda-paths``
compiles, for cuda (sm_90) and llvm-cpu, and records the llvm-cpu outputs of:

- a 2-layer MLP with a dynamic batch (1..256) under fp8-current, fp8-block, fp8-rowwise, mxfp8
  and nvfp4, at batches 3, 64 and 200 (at 3 the few-rows GEMMs where a recipe has them);
- its training step under fp8-current and mxfp8 (SGD): the losses and parameters after three
  steps on fixed inputs;
- small MoE causal LMs (Mixtral, DeepSeek-V3, Qwen3-MoE: every expert's GEMMs quantized,
  ``compiler/frontend/moe.py``) with dynamic batch and sequence under fp8-block, mxfp8 and nvfp4,
  for cuda both with routed experts (the default: each expert over its tokens plus one spare
  zero row) and dense ones (``--experts dense``): their logits at three sizes (at 1x2 most
  experts get no token), from two llvm-cpu builds, ``--cpu host`` and ``--cpu generic`` (no
  FMA: other roundings of the same sums);
- generators (``compile_generator``: a 2-layer Llama from ``samples/decoder_lm.py``, its KV cache
  in the module) under fp8-block with its weights in a parameter file beside the artifact, and
  fp8-current, nvfp4, fp8-rowwise and ``none`` inline: the prompt's logits and 24 greedy tokens.

On the GPU machine (``iree-base-runtime``, numpy, ml_dtypes; ``PYTHONPATH`` at the repository):
``python benchmarks/gpu_probes/cuda_paths.py run --dir build/cuda-paths`` runs the cuda
artifacts and prints each output's relative L2 against llvm-cpu's (models within 1e-3; the
steps' losses and parameters within 1e-3: the GEMM sums differ in order, and the quantize of
the next step sees those differences; a generator's greedy tokens identical). A MoE LM's logits
pass within 1e-3 of either llvm-cpu build: where an activation lies within a rounding of an FP8
rounding boundary or an E8M0 scale step, another order of the same sums moves it across, and the
logits move by about 1e-3 (DeepSeek-V3 under mxfp8 at 3x20: the two llvm-cpu builds 1.4e-3
apart). Exits 1 when one is off or fails. It also times the generators' decode beside
transformers' ``generate`` (KV cache, greedy) on the same model in torch eager f32 and bf16 on
the GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BATCHES = (3, 64, 200)
MODEL_RECIPES = ("fp8-current", "fp8-block", "fp8-rowwise", "mxfp8", "nvfp4")
STEP_RECIPES = ("fp8-current", "mxfp8")
STEPS = 3
TOLERANCE = 1e-3
MOE_CASES = (("mixtral", "fp8-block"), ("deepseek_v3", "mxfp8"), ("qwen3_moe", "nvfp4"))
MOE_SIZES = ((2, 16), (3, 20), (1, 2))  # 1x2: experts without a token (zero rows)
MOE_CPUS = ("host", "generic")  # the llvm-cpu builds a MoE LM's logits are checked against
MOE_EXPERTS = ("routed", "dense")
GEN_CASES = (("fp8-block", "external"), ("fp8-current", "inline"), ("nvfp4", "inline"))
GEN_CASES += (("fp8-rowwise", "inline"), ("none", "inline"))
GEN_LAYERS, GEN_VOCAB, GEN_PROMPT, GEN_NEW, GEN_MAX_SEQ = 2, 1024, 12, 24, 64


def _mlp() -> Any:
    import torch
    from torch import nn

    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 128)).eval()


def _loss_model() -> Any:
    import torch
    from torch import nn

    class Loss(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = _mlp()

        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return ((self.net(x) - y) ** 2).mean()

    return Loss().train()


def build(out: Path) -> int:
    sys.path.insert(0, str(ROOT))
    import torch

    import compiler

    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    expected: dict[str, np.ndarray] = {}
    manifest: dict[str, Any] = {"models": [], "steps": []}
    batch = torch.export.Dim("batch", min=1, max=256)
    for recipe in MODEL_RECIPES:
        arts = {}
        for target in ("cuda", "llvm-cpu"):
            arts[target] = compiler.compile(
                _mlp(),
                (torch.randn(4, 256),),
                recipe,
                target=target,
                dynamic_shapes=({0: batch},),
                **({"cuda_arch": "sm_90"} if target == "cuda" else {}),
            )
        name = f"mlp-dynamic-{recipe}"
        arts["cuda"].save(out / f"{name}.vmfb")
        for b in BATCHES:
            x = rng.standard_normal((b, 256)).astype(np.float32)
            expected[f"{name}.x{b}"] = x
            expected[f"{name}.y{b}"] = arts["llvm-cpu"](x)
        manifest["models"].append(name)
        print(f"built {name}")
    manifest["moe"] = []
    lm_batch, lm_seq = (
        torch.export.Dim("batch", min=1, max=8),
        torch.export.Dim("seq", min=2, max=32),
    )
    for arch, recipe in MOE_CASES:
        from samples import moe_lm

        ids = torch.zeros((2, 16), dtype=torch.int64)
        name = f"moe-{arch}-{recipe}"
        references = {
            cpu: compiler.compile(
                moe_lm.make(arch),
                (ids,),
                recipe,
                cpu=cpu,
                dynamic_shapes=({0: lm_batch, 1: lm_seq},),
            )
            for cpu in MOE_CPUS
        }
        for b, t in MOE_SIZES:
            x = rng.integers(0, 256, (b, t)).astype(np.int64)
            expected[f"{name}.x{b}x{t}"] = x
            for cpu, reference in references.items():
                expected[f"{name}.y{b}x{t}.{cpu}"] = _logits(reference(x))
        for experts in MOE_EXPERTS:  # cuda's default (routed, padded) and the dense form
            compiler.compile(
                moe_lm.make(arch),
                (ids,),
                recipe,
                target="cuda",
                cuda_arch="sm_90",
                experts=experts,
                dynamic_shapes=({0: lm_batch, 1: lm_seq},),
            ).save(out / f"{name}-{experts}.vmfb")
            manifest["moe"].append(f"{name}-{experts}")
        print(f"built {name}")
    manifest["generators"] = _build_generators(out, expected)
    x = rng.standard_normal((32, 256)).astype(np.float32)
    y = rng.standard_normal((32, 128)).astype(np.float32)
    for recipe in STEP_RECIPES:
        steps = {}
        for target in ("cuda", "llvm-cpu"):
            extra = {"cuda_arch": "sm_90"} if target == "cuda" else {}
            steps[target] = compiler.compile_training(
                _loss_model(),
                (torch.from_numpy(x), torch.from_numpy(y)),
                recipe,
                target=target,
                lr=0.05,
                **extra,
            )
        name = f"mlp-step-{recipe}"
        steps["cuda"].save(out / f"{name}.vmfb")
        cpu = steps["llvm-cpu"]
        expected[f"{name}.loss"] = np.array([float(cpu(x, y)) for _ in range(STEPS)], np.float32)
        for key, value in cpu.parameters(as_torch=False).items():
            expected[f"{name}.param.{key}"] = np.asarray(value)
        manifest["steps"].append(name)
        print(f"built {name}")
    expected["step.x"], expected["step.y"] = x, y
    np.savez(out / "expected.npz", **expected)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


def _gen_lm() -> Any:
    from samples import decoder_lm

    return decoder_lm.make_lm(layers=GEN_LAYERS, vocab=GEN_VOCAB)


def gen_prompt() -> np.ndarray:
    return np.random.default_rng(1).integers(0, GEN_VOCAB, (1, GEN_PROMPT)).astype(np.int64)


def _build_generators(out: Path, expected: dict[str, np.ndarray]) -> list[str]:
    """Each generator for cuda (saved, with its parameter file where the weights are external)
    and llvm-cpu (whose prompt logits and greedy tokens are the expected ones)."""
    import compiler

    lm, prompt, names = _gen_lm(), gen_prompt(), []
    expected["gen.prompt"] = prompt
    for recipe, weights in GEN_CASES:
        gens = {}
        for target in ("cuda", "llvm-cpu"):
            gens[target] = compiler.compile_generator(
                lm,
                recipe=recipe,
                target=target,
                max_seq_len=GEN_MAX_SEQ,
                weights=weights,
                **({"cuda_arch": "sm_90"} if target == "cuda" else {}),
            )
        name = f"gen-{recipe}-{weights}"
        gens["cuda"].save(out / f"{name}.vmfb")
        cpu = gens["llvm-cpu"]
        expected[f"{name}.prefill"] = cpu.step(prompt, 0)
        expected[f"{name}.tokens"] = cpu.generate(prompt, max_new_tokens=GEN_NEW, eos_token_id=[])
        names.append(name)
        print(f"built {name}")
    return names


def torch_generate_ms(lm: Any, ids: Any, new: int, repeats: int = 3) -> tuple[float, float]:
    """transformers' greedy ``generate`` (KV cache) of ``lm`` on ``ids`` on the GPU: ms per
    decoded token (the prefill's token left out) and the prefill's ms, each the best of
    ``repeats`` after a warm-up."""
    import time

    import torch

    def once(count: int) -> float:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            lm.generate(
                ids, max_new_tokens=count, min_new_tokens=count, do_sample=False, use_cache=True
            )
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    once(new)  # warm-up
    full = min(once(new) for _ in range(repeats))
    prefill = min(once(1) for _ in range(repeats))
    return (full - prefill) / (new - 1) * 1e3, prefill * 1e3


def _torch_decode_ms(dtype_name: str) -> float | None:
    """The generators' model in torch eager on the GPU: ms per decoded token, or None without
    CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    lm = _gen_lm().to("cuda", getattr(torch, dtype_name))
    return torch_generate_ms(lm, torch.from_numpy(gen_prompt()).cuda(), GEN_NEW)[0]


def _run_generators(folder: Path, expected: Any, names: list[str], report: Any) -> bool:
    """Each cuda generator's prompt logits and greedy tokens against llvm-cpu's; its decode
    time per token beside torch eager's. False when one fails to load or run."""
    from compiler.runtime import load

    ok, prompt, rows = True, expected["gen.prompt"], []
    for name in names:
        try:
            gen = load(folder / f"{name}.vmfb", device="cuda")
            report(f"{name} prompt logits", _rel(gen.step(prompt, 0), expected[f"{name}.prefill"]))
            gen.generate(prompt, max_new_tokens=GEN_NEW, eos_token_id=[])  # warm-up
            tokens = gen.generate(prompt, max_new_tokens=GEN_NEW, eos_token_id=[])
            want = expected[f"{name}.tokens"]
            same = int(np.argmin(np.append(tokens[0] == want[0], False)))
            equal = 0.0 if same == want.shape[1] else 1.0  # a row of report: 0 is a pass
            report(f"{name} greedy tokens equal ({same} of {want.shape[1]})", equal)
            stats = gen.last_stats
            assert stats is not None
            decode_ms = stats.decode_s / (stats.new_tokens - 1) * 1e3
            rows.append((name, decode_ms, stats.prefill_s * 1e3))
        except Exception as e:  # noqa: BLE001 - a failing artifact is a row
            ok = False
            print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    for dtype in ("float32", "bfloat16"):
        ms = _torch_decode_ms(dtype)
        if ms is not None:
            rows.append((f"torch eager {dtype} generate", ms, float("nan")))
    model = f"{GEN_LAYERS}-layer Llama (hidden 256, vocab {GEN_VOCAB})"
    print(f"decode, {model}, {GEN_PROMPT}-token prompt:")
    for label, decode, prefill in rows:
        print(f"  {label:40s} {decode:7.3f} ms/token   prefill {prefill:7.3f} ms")
    return ok


def _logits(out: Any) -> np.ndarray:
    """A causal LM artifact's logits (its outputs are named: ``{"logits": ...}``)."""
    return np.asarray(out["logits"] if isinstance(out, dict) else out)


def _rel(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def run(folder: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from compiler.runtime import load

    manifest = json.loads((folder / "manifest.json").read_text())
    expected = np.load(folder / "expected.npz")
    ok = True

    def report(label: str, err: float) -> None:
        nonlocal ok
        good = err <= TOLERANCE
        ok &= good
        print(f"{label:44s} rel L2 {err:.2e} {'ok' if good else 'FAIL'}", flush=True)

    for name in manifest["models"]:
        try:
            art = load(folder / f"{name}.vmfb", device="cuda")
            for b in BATCHES:
                report(
                    f"{name} batch {b}",
                    _rel(art(expected[f"{name}.x{b}"]), expected[f"{name}.y{b}"]),
                )
        except Exception as e:  # noqa: BLE001 - a failing artifact is a row
            ok = False
            print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    for name in manifest.get("moe", []):
        reference = name.rsplit("-", 1)[0]  # the llvm-cpu outputs both forms are checked against
        try:
            art = load(folder / f"{name}.vmfb", device="cuda")
        except Exception as e:  # noqa: BLE001 - a failing artifact is a row
            ok = False
            print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            continue
        for b, t in MOE_SIZES:
            try:
                got = _logits(art(expected[f"{reference}.x{b}x{t}"]))
                errs = {cpu: _rel(got, expected[f"{reference}.y{b}x{t}.{cpu}"]) for cpu in MOE_CPUS}
                apart = "  ".join(f"{cpu} {err:.2e}" for cpu, err in errs.items())
                report(f"{name} {b}x{t} ({apart})", min(errs.values()))
            except Exception as e:  # noqa: BLE001 - a failing size is a row
                ok = False
                print(f"{name} {b}x{t}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    ok &= _run_generators(folder, expected, manifest.get("generators", []), report)
    x, y = expected["step.x"], expected["step.y"]
    for name in manifest["steps"]:
        try:
            step = load(folder / f"{name}.vmfb", device="cuda")
            losses = np.array([float(step(x, y)) for _ in range(STEPS)], np.float32)
            print(
                f"{name} losses cuda {losses.tolist()} llvm-cpu {expected[f'{name}.loss'].tolist()}"
            )
            report(f"{name} losses", _rel(losses, expected[f"{name}.loss"]))
            params = step.parameters(as_torch=False)
            worst = max(
                _rel(value, expected[f"{name}.param.{key}"]) for key, value in params.items()
            )
            report(f"{name} parameters after {STEPS} steps (worst)", worst)
        except Exception as e:  # noqa: BLE001 - a failing artifact is a row
            ok = False
            print(f"{name}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("build", "run"))
    parser.add_argument("--dir", type=Path, default=Path("build/cuda-paths"))
    args = parser.parse_args()
    return build(args.dir) if args.mode == "build" else run(args.dir)


if __name__ == "__main__":
    sys.exit(main())
