"""Text generation on the CPU: qmlir generators against transformers' eager ``generate``.

    python benchmarks/generate.py [--sizes 0.35b 1.1b] [--recipes none fp8-current ...]
                                  [--work DIR] [--prompt 32] [--new 128] [--max-seq 512]
                                  [--weights external|inline] [--kv-caches model fp8]
                                  [--pack-weights auto|load|call|decoded] [--malloc retain|default]
                                  [--decode-gemv auto off] [--recompile]

For each size the benchmark reuses (or writes, as ``llm_scale.py`` does) a random-weight bf16
Llama checkpoint, then, each in a process of its own:

- transformers eager bf16 with a static cache (``generate(..., cache_implementation="static")``,
  greedy, ``torch.set_num_threads(2)``): the prefill (one forward of the prompt; the median of
  :data:`PREFILLS`) and the decode (the rest of ``generate``'s time over its new tokens but the
  first);
- per recipe, ``qmlir compile DIR --generate --max-seq-len N`` and then a generation of the
  same length through ``Generator.generate`` (greedy), after one warm-up generation: decode
  timed as ``Generator.last_stats`` reports it, the prefill as the median of :data:`PREFILLS`
  prefills of the prompt (``Generator.step`` at position 0), peak RSS while generating. The
  process keeps freed memory for reuse (``compiler.retain_freed_memory``), as ``qmlir
  generate`` does, unless ``--malloc default``.

``--kv-caches model fp8`` compiles each recipe with each KV cache format (``fp8``: E4M3 codes
with an E8M0 scale per 32 values), and says how many of the new tokens agree with the same
recipe's model-dtype cache before the first difference.

Printed (and written with ``--json``): prefill ms, decode tokens/s and its ratio to torch bf16,
the decode step's time against its bound (the step's weight bytes, the parameter file, plus
the KV cache it reads, at this host's two-thread read bandwidth: ``np.sum`` over 1 GiB in two
threads), and peak RSS (the whole process's) against the parameter file plus the cache the
artifact allocates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from llm_scale import SIZES, llama_config, write_checkpoint  # noqa: E402

PREFILLS = 3  # prefills timed, each side (a single one caught a 1.7x hiccup of this VM once)

_TORCH = r"""
import json, sys, time, torch, numpy as np, transformers
torch.set_num_threads(2)
folder, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lm = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
vocab = lm.config.vocab_size
ids = torch.from_numpy(np.random.default_rng(3).integers(0, vocab, (1, prompt)).astype(np.int64))
kw = dict(do_sample=False, cache_implementation="static", max_new_tokens=new, min_new_tokens=new)
with torch.no_grad():
    lm.generate(ids, **kw)  # warm-up
    times = []
    for _ in range(int(sys.argv[4])):
        t0 = time.perf_counter(); lm(ids, use_cache=False, logits_to_keep=1)
        times.append(time.perf_counter() - t0)
    t1 = time.perf_counter(); out = lm.generate(ids, **kw); t2 = time.perf_counter()
prefill = float(np.median(times))
print(json.dumps({"prefill_s": prefill, "decode_tps": (new - 1) / ((t2 - t1) - prefill),
                  "tokens": out[0, prompt:].tolist()}))
"""

_QMLIR = r"""
import json, sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
import compiler
if sys.argv[6] == "retain":
    compiler.retain_freed_memory()  # as `qmlir generate` does
gen = compiler.load(sys.argv[2])
prompt, new = int(sys.argv[3]), int(sys.argv[4])
vocab = gen.generation.vocab
ids = np.random.default_rng(3).integers(0, vocab, (1, prompt)).astype(np.int64)
gen.generate(ids, 2, eos_token_id=[])  # warm-up (loads and maps the module)
out = gen.generate(ids, new, eos_token_id=[])
s = gen.last_stats
hwm = [int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
times = []
for _ in range(int(sys.argv[7])):  # the prompt's prefill alone, as torch's is timed
    t0 = time.perf_counter(); gen.step(ids, 0); times.append(time.perf_counter() - t0)
# teacher-forced logits over one fixed sequence: the prompt's prefill, then a decode step per
# token (every variant sees the same tokens; compared across KV cache formats by the parent)
fixed = np.random.default_rng(4).integers(0, vocab, (1, prompt + new)).astype(np.int64)
rows = [gen.step(fixed[:, :prompt], 0)[0]]
rows += [gen.step(fixed[:, p : p + 1], p)[0] for p in range(prompt, prompt + new - 1)]
np.save(sys.argv[5], np.stack(rows))
print(json.dumps({"prefill_s": float(np.median(times)), "decode_tps": s.decode_tokens_per_s,
                  "peak_mb": hwm, "tokens": out[0, prompt:].tolist()}))
"""


def read_bandwidth() -> float:
    """GB/s of reading 1 GiB with two threads (``np.sum`` of halves), best of 3."""
    a = np.ones(1 << 28, np.float32)
    halves = np.split(a, 2)
    best = 0.0
    for _ in range(3):
        threads = [threading.Thread(target=np.sum, args=(h,)) for h in halves]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best = max(best, a.nbytes / (time.perf_counter() - start) / 1e9)
    return best


def child(code: str, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT
    )
    if result.returncode != 0:
        raise SystemExit(f"child failed: {result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def cache_bytes(size: str, positions: int, kv_cache: str = "model") -> int:
    """The KV cache's bytes (bf16, or FP8 codes and E8M0 scales) a step attending over
    ``positions`` reads."""
    c = llama_config(size)
    head = c["hidden_size"] // c["num_attention_heads"]
    per_value = 2 if kv_cache == "model" else 1 + 1 / 32
    return int(2 * c["num_hidden_layers"] * c["num_key_value_heads"] * head * positions * per_value)


def _kv_accuracy(rows: list[tuple[str, dict, int | None, str]]) -> None:
    """Each FP8-cache row's teacher-forced logits against its recipe's model-dtype cache's: the
    same fixed tokens, the prefill's last position and every decode step's."""
    table = []
    for name, m, _, kv in rows:
        base = next(
            (b for n, b, _, _ in rows if kv != "model" and n == name.split(".kv-")[0]), None
        )
        if base is None:
            continue
        got, want = np.load(m["logits"]), np.load(base["logits"])
        rel = np.linalg.norm(got - want, axis=1) / np.linalg.norm(want, axis=1)
        cos = (
            np.sum(got * want, axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        )
        top1 = np.mean(got.argmax(1) == want.argmax(1))
        table.append(
            f"| {name} | {rel.mean():.4f} | {rel.max():.4f} | {cos.mean():.5f} | "
            f"{cos.min():.5f} | {100 * top1:.1f}% |"
        )
    if table:
        print("\nFP8 KV cache against the model-dtype cache (teacher-forced logits, every step):")
        print("| variant | rel L2 mean | rel L2 max | cosine mean | cosine min | same top-1 |")
        print("|---|---|---|---|---|---|")
        print("\n".join(table))


def _leading(tokens: list[int], reference: list[int]) -> int:
    """How many of ``tokens`` equal ``reference``'s before the first difference."""
    for i, (a, b) in enumerate(zip(tokens, reference, strict=False)):
        if a != b:
            return i
    return min(len(tokens), len(reference))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["0.35b", "1.1b"], choices=SIZES)
    parser.add_argument(
        "--recipes", nargs="+", default=["none", "fp8-current", "fp8-block", "mxfp8", "nvfp4"]
    )
    parser.add_argument("--work", default="/tmp/qmlir-llm", help="checkpoints and artifacts")
    parser.add_argument("--prompt", type=int, default=32)
    parser.add_argument("--new", type=int, default=128)
    parser.add_argument("--max-seq", type=int, default=512)
    parser.add_argument("--weights", default="external", choices=("external", "inline"))
    parser.add_argument(
        "--pack-weights",
        default="auto",
        choices=("auto", "load", "call", "decoded"),
        help="qmlir compile's --pack-weights (auto, its default: decoded with --weights "
        "external; decoded: external FP8/FP4 weights decoded once at load, not in every step: "
        "decode speed against their decoded copies in memory)",
    )
    parser.add_argument(
        "--decode-gemv",
        nargs="+",
        default=["auto"],
        choices=("auto", "off"),
        help="qmlir compile's --decode-gemv, each recipe compiled with each (off: the decode "
        "step's FP8 GEMMs data-tiled, the rows tagged .gemv-off)",
    )
    parser.add_argument(
        "--malloc",
        default="retain",
        choices=("retain", "default"),
        help="retain (default): the qmlir processes keep freed memory for reuse, as `qmlir "
        "generate` does (compiler.retain_freed_memory); default: glibc's own behaviour",
    )
    parser.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        help="an extra iree-compile flag for the qmlir artifacts (repeatable; the rows are "
        "tagged with --tag)",
    )
    parser.add_argument(
        "--kv-caches",
        nargs="+",
        default=["model"],
        choices=("model", "fp8"),
        help="the KV cache formats each recipe is compiled with (default: model)",
    )
    parser.add_argument("--tag", default="", help="a suffix for the rows and artifact names")
    parser.add_argument(
        "--recompile",
        action="store_true",
        help="compile every artifact again (else one found in --work from an earlier run is "
        "reused: an older compiler's, after a change)",
    )
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    bandwidth = read_bandwidth()
    print(
        f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"two-thread read bandwidth {bandwidth:.1f} GB/s"
    )
    print(
        f"batch 1, prompt {args.prompt}, {args.new} new tokens, cache {args.max_seq}, "
        f"weights {args.weights}\n"
    )
    results = []
    for size in args.sizes:
        folder = work / f"llama-{size}"
        if not (folder / "config.json").is_file():
            write_checkpoint(folder, size)
        torch = child(_TORCH, str(folder), str(args.prompt), str(args.new), str(PREFILLS))
        rows = [("torch eager bf16", torch, None, "model")]
        variants = [
            (r, kv, g) for r in args.recipes for kv in args.kv_caches for g in args.decode_gemv
        ]
        for recipe, kv, gemv in variants:
            tag = recipe + ("" if args.pack_weights == "auto" else f".{args.pack_weights}")
            if args.weights == "inline":
                tag += ".inline"
            if kv != "model":
                tag += f".kv-{kv}"
            if gemv != "auto":
                tag += f".gemv-{gemv}"
            if args.tag:
                tag += f".{args.tag}"
            out = work / f"gen-{size}.{tag}.vmfb"
            if args.recompile or not out.is_file():
                flags = ["--generate", "--max-seq-len", str(args.max_seq), "--weights",
                         args.weights, "--kv-cache", kv, "-q"]  # fmt: skip
                flags += ["--pack-weights", args.pack_weights]
                flags += ["--decode-gemv", gemv]
                flags += [f"--iree-flag={f}" for f in args.iree_flag]
                subprocess.run(
                    [sys.executable, "-m", "compiler.cli", "compile", str(folder),
                     "--recipe", recipe, "-o", str(out), *flags], check=True, cwd=ROOT,
                )  # fmt: skip
                # the new parameter file written back to the disk before the timed run: its
                # writeback beside the run slowed a 1.1B decode step by up to 30% (RESULTS.md)
                os.sync()
            logits = out.with_suffix(".logits.npy")
            measured = child(
                _QMLIR,
                str(ROOT),
                str(out),
                str(args.prompt),
                str(args.new),
                str(logits),
                args.malloc,
                str(PREFILLS),
            )
            measured["logits"] = str(logits)
            params = out.with_name(out.name.removesuffix(".vmfb") + ".params.safetensors")
            weights = params.stat().st_size if params.is_file() else out.stat().st_size
            label = f"qmlir {tag}" + (" (glibc malloc)" if args.malloc == "default" else "")
            rows.append((label, measured, weights, kv))
        positions = args.prompt + args.new // 2  # the average decode step's
        print(f"## {size} ({folder})")
        print(
            "| variant | prefill ms | decode tok/s | vs torch bf16 | step ms | bound ms "
            "| step / bound | peak RSS MB | RSS / (file + cache) | same tokens as `none` "
            "| tokens as model cache |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        reference = next(  # the `none` row of this run, whichever malloc, mode or tag
            (
                m["tokens"]
                for name, m, _, kv in rows
                if kv == "model" and name.split(" (")[0].split(".")[0] == "qmlir none"
            ),
            None,
        )
        for name, m, weights, kv in rows:
            step = 1e3 / m["decode_tps"]
            bound = (
                1e3 * (weights + cache_bytes(size, positions, kv)) / (bandwidth * 1e9)
                if weights
                else float("nan")
            )
            # the whole process's peak (the interpreter and IREE's runtime included) against the
            # parameter file and the cache the artifact allocates (every position)
            held = (weights or 0) + cache_bytes(size, args.max_seq, kv)
            peak = m.get("peak_mb", float("nan"))
            rss = f"{peak * 2**20 / held:.2f}" if weights else ""
            same = "" if reference is None or weights is None else str(m["tokens"] == reference)
            base = next(
                (b for n, b, _, _ in rows if kv != "model" and n == name.replace(f".kv-{kv}", "")),
                None,
            )
            agree = "" if base is None else f"{_leading(m['tokens'], base['tokens'])}/{args.new}"
            print(
                f"| {name} | {1e3 * m['prefill_s']:.1f} | {m['decode_tps']:.2f} | "
                f"{m['decode_tps'] / torch['decode_tps']:.2f} | {step:.1f} | {bound:.1f} | "
                f"{step / bound:.1f} | {peak:.0f} | {rss} | {same} | {agree} |"
            )
            results.append(
                {"size": size, "variant": name, **{k: v for k, v in m.items() if k != "tokens"}}
            )
        _kv_accuracy(rows)
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
