"""Large language models from checkpoint folders: compile time and peak memory against model size.

    python benchmarks/llm_scale.py [--sizes 0.35b 1.1b 8b] [--recipes fp8-current fp8-block nvfp4]
                                   [--work DIR] [--keep] [--answer] [--fp8-blocks] [--cold]

For each size the benchmark writes a random-weight bf16 Llama checkpoint itself (safetensors
shards of at most 2 GB, streamed tensor by tensor: it never holds the model), then compiles it
with ``qmlir compile DIR --recipe R`` (weights external, dynamic batch and sequence) in a child
process per recipe, reporting:

- compile wall time, split into the weight stream (the CLI's "write weights" stage: read each
  checkpoint tensor, quantize it, write the parameter file) and the rest, "graph" (export,
  import, passes, IREE, and compiling the quantize functions for the host, the "quantize code"
  stage, shown apart: 2-3 s whatever the model's size);
- the bound for the weight stream: checkpoint bytes read plus parameter bytes written at this
  host's measured copy bandwidth (``np.copyto`` of 1 GiB; the checkpoint in the page cache) or
  disk read rate (1 GiB dropped from the page cache, read back; a checkpoint the page cache
  cannot hold beside the compile, such as the 8B's 16 GB on a 24 GB host) and its disk write
  rate (``dd`` style, 1 GiB, fsync'd);
- with ``--cold``: each compile starts with the checkpoint's pages dropped from the page cache
  (``posix_fadvise`` DONTNEED on every shard; no privileges needed), and after a size's
  compiles the checkpoint is read alone from a cold cache with the compile's own reader
  (``Checkpoint.read_stored``, tensor by tensor): "read alone", the disk's pace for this very
  file, which the 1 GiB probe (written and read back at once) may not show on a VM whose host
  caches it;
- peak RSS of the compile's processes (``VmHWM`` of the qmlir process; ``ru_maxrss`` of its
  children, ``iree-compile``, which Linux reports as at least the parent's RSS when it forked,
  so it bounds iree-compile's peak from above), against the target ``3 GB + 2 x the largest
  tensor``;
- the artifact's and parameter file's sizes;
- with ``--fp8-blocks``: the checkpoint is a DeepSeek-V3-style FP8 one instead (transformers
  ``quant_method: fp8``, every linear weight but the head E4M3 with a ``weight_scale_inv`` per
  128x128 block, made from the same std-0.02 weights by DeepSeek's rule), compiled as stored
  with its own recipe, fp8-block (``--recipes`` is ignored);
- with ``--answer``: the compiled model answers a 16-token prompt in a process of its own (RSS
  after one call: mapped parameter pages and heap), and torch's bf16 model (``from_pretrained``
  on the same folder, in its own process afterwards, once per size) gives the reference
  logits: cosine similarity. For fp8-current, torch's own fake-quantization of the recipe
  (``_EMULATE``: TE's scale rule and torch's E4M3 cast on every ``nn.Linear``) separates the
  format's error on these weights from qmlir's: its cosine against bf16, and qmlir's against it;
- with ``--init scaled``: the residual-output projections are drawn at ``0.02 / sqrt(2 layers)``
  (GPT-2's and Megatron-LM's initialization) instead of 0.02, for a model whose residual stream
  does not grow with depth (bf16 checkpoints; the FP8 one keeps std 0.02).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = {  # hidden, layers, intermediate, heads, kv heads, vocab
    "0.35b": (1024, 24, 2816, 16, 4, 32000),
    "1.1b": (2048, 22, 5632, 32, 4, 32000),
    "8b": (4096, 32, 14336, 32, 8, 128256),
}
SHARD_BYTES = 2 << 30


def llama_config(size: str) -> dict:
    hidden, layers, inter, heads, kv, vocab = SIZES[size]
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "intermediate_size": inter,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": vocab,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "hidden_act": "silu",
        "dtype": "bfloat16",
        "bos_token_id": 1,
        "eos_token_id": 2,
    }


def tensor_shapes(config: dict) -> list[tuple[str, tuple[int, ...]]]:
    """The Llama state dict's names and shapes, in transformers' order."""
    h, n, i = config["hidden_size"], config["num_hidden_layers"], config["intermediate_size"]
    heads, kv, vocab = (
        config["num_attention_heads"],
        config["num_key_value_heads"],
        config["vocab_size"],
    )
    d = h // heads
    out = [("model.embed_tokens.weight", (vocab, h))]
    for layer in range(n):
        p = f"model.layers.{layer}."
        out += [
            (p + "self_attn.q_proj.weight", (heads * d, h)),
            (p + "self_attn.k_proj.weight", (kv * d, h)),
            (p + "self_attn.v_proj.weight", (kv * d, h)),
            (p + "self_attn.o_proj.weight", (h, heads * d)),
            (p + "mlp.gate_proj.weight", (i, h)),
            (p + "mlp.up_proj.weight", (i, h)),
            (p + "mlp.down_proj.weight", (h, i)),
            (p + "input_layernorm.weight", (h,)),
            (p + "post_attention_layernorm.weight", (h,)),
        ]
    out += [("model.norm.weight", (h,)), ("lm_head.weight", (vocab, h))]
    return out


RESIDUAL_OUTPUTS = ("o_proj.weight", "down_proj.weight")


def weight_std(name: str, layers: int, init: str) -> float:
    """The std of a random weight: 0.02 (transformers' ``initializer_range``); ``init="scaled"``
    gives the projections that write into the residual stream (``o_proj``, ``down_proj``)
    ``0.02 / sqrt(2 * layers)``, the scaled initialization of GPT-2 and Megatron-LM, so that the
    residual stream's variance does not grow with depth."""
    if init == "scaled" and name.endswith(RESIDUAL_OUTPUTS):
        return 0.02 / float(np.sqrt(2 * layers))
    return 0.02


def _random_bf16(
    shape: tuple[int, ...], name: str, rng: np.random.Generator, std: float = 0.02
) -> bytes:
    """Normal weights of ``std`` (norm weights 1), as bf16 bytes (truncated f32: random data)."""
    count = int(np.prod(shape))
    if name.endswith("norm.weight"):
        return np.full(count, 0x3F80, np.uint16).tobytes()
    out = np.empty(count, np.uint16)
    step = 1 << 24
    for start in range(0, count, step):
        block = rng.standard_normal(min(step, count - start), dtype=np.float32) * np.float32(std)
        out[start : start + len(block)] = block.view(np.uint32) >> 16
    return out.tobytes()


ITEM = {"BF16": 2, "F32": 4, "F8_E4M3": 1}


def _entries(config: dict, fp8: bool) -> list[tuple[str, str, tuple[int, ...]]]:
    """The checkpoint's tensors: name, safetensors dtype, shape (an FP8 weight's scale after
    it)."""
    out = []
    for name, shape in tensor_shapes(config):
        if fp8 and name.endswith("proj.weight"):
            grid = tuple(-(-n // 128) for n in shape)
            out += [(name, "F8_E4M3", shape), (name + "_scale_inv", "F32", grid)]
        else:
            out.append((name, "BF16", shape))
    return out


class _Fp8Blocks:
    """DeepSeek-V3's ``weight_quant`` of std-0.02 weights: per 128x128 block ``s = amax / 448``,
    codes ``cast(w / s)``; the scale is kept for the tensor written next."""

    def __init__(self) -> None:
        self.scale = np.empty(0, np.float32)

    def codes(self, shape: tuple[int, ...], rng: np.random.Generator) -> bytes:
        import ml_dtypes

        rows, cols = shape
        w = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
        br, bc = -(-rows // 128), -(-cols // 128)
        padded = np.zeros((br * 128, bc * 128), np.float32)
        padded[:rows, :cols] = w
        blocks = padded.reshape(br, 128, bc, 128)
        self.scale = (np.abs(blocks).max(axis=(1, 3)) / np.float32(448)).astype(np.float32)
        scaled = blocks / self.scale[:, None, :, None]
        codes = scaled.reshape(br * 128, bc * 128)[:rows, :cols].astype(ml_dtypes.float8_e4m3fn)
        return codes.tobytes()


def write_checkpoint(
    folder: Path, size: str, seed: int = 0, fp8: bool = False, init: str = "normal"
) -> int:
    """A random bf16 Llama of ``size`` in ``folder`` (shards + index + config); its bytes.
    ``fp8``: its linear weights (not the head) in DeepSeek-V3's FP8 128x128-block format.
    ``init``: ``normal`` (std 0.02 everywhere) or ``scaled`` (:func:`weight_std`)."""
    config = llama_config(size)
    if fp8:
        config["quantization_config"] = {
            "quant_method": "fp8",
            "activation_scheme": "dynamic",
            "weight_block_size": [128, 128],
        }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    entries = _entries(config, fp8)
    shards: list[list[tuple[str, str, tuple[int, ...]]]] = [[]]
    used = 0
    for name, dtype, shape in entries:
        nbytes = ITEM[dtype] * int(np.prod(shape))
        if shards[-1] and used + nbytes > SHARD_BYTES and dtype != "F32":
            shards.append([])
            used = 0
        shards[-1].append((name, dtype, shape))
        used += nbytes
    blocks = _Fp8Blocks()
    rng = np.random.default_rng(seed)
    weight_map = {}
    total = 0
    for k, shard in enumerate(shards):
        file = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        header, offset = {}, 0
        for name, dtype, shape in shard:
            nbytes = ITEM[dtype] * int(np.prod(shape))
            header[name] = {
                "dtype": dtype,
                "shape": list(shape),
                "data_offsets": [offset, offset + nbytes],
            }
            offset += nbytes
            weight_map[name] = file
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 8)
        with open(folder / file, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for name, dtype, shape in shard:
                if dtype == "F8_E4M3":
                    f.write(blocks.codes(shape, rng))
                elif dtype == "F32":
                    f.write(blocks.scale.tobytes())
                else:
                    std = weight_std(name, config["num_hidden_layers"], init)
                    f.write(_random_bf16(shape, name, rng, std))
        total += offset
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=1))
    return total


def largest_tensor_bytes(size: str) -> int:
    return max(2 * int(np.prod(s)) for _, s in tensor_shapes(llama_config(size)))


def copy_bandwidth() -> float:
    """GB/s of ``np.copyto`` of 1 GiB (read + write counted once: bytes copied per second)."""
    a = np.ones(1 << 28, np.float32)
    b = np.empty_like(a)
    np.copyto(b, a)
    start = time.perf_counter()
    for _ in range(3):
        np.copyto(b, a)
    return 3 * a.nbytes / (time.perf_counter() - start) / 1e9


def disk_write_rate(directory: Path) -> float:
    """GB/s of writing 1 GiB to ``directory`` with an fsync."""
    data = os.urandom(1 << 24) * 64
    path = directory / ".qmlir-disk-probe"
    start = time.perf_counter()
    with open(path, "wb") as f:
        f.write(data)
        os.fsync(f.fileno())
    rate = len(data) / (time.perf_counter() - start) / 1e9
    path.unlink()
    return rate


def drop_from_page_cache(folder: Path) -> None:
    """Asks the kernel to drop the shards' pages (clean pages go; no privileges needed)."""
    os.sync()
    for shard in folder.glob("*.safetensors"):
        fd = os.open(shard, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def read_alone(folder: Path) -> float:
    """Seconds to read every tensor of the checkpoint from a cold page cache with the compile's
    own reader, one at a time (``compiler.frontend.checkpoint.Checkpoint.read_stored``)."""
    sys.path.insert(0, str(ROOT))
    from compiler.frontend.checkpoint import Checkpoint

    checkpoint = Checkpoint(folder)
    drop_from_page_cache(folder)
    start = time.perf_counter()
    for name in checkpoint.shapes:
        checkpoint.read_stored(name)
    return time.perf_counter() - start


def disk_read_rate(directory: Path) -> float:
    """GB/s of reading 1 GiB from ``directory``'s disk (written, fsync'd, its pages dropped from
    the page cache, read back)."""
    path = directory / ".qmlir-disk-probe"
    data = os.urandom(1 << 24) * 64
    with open(path, "wb") as f:
        f.write(data)
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        start = time.perf_counter()
        with os.fdopen(os.dup(fd), "rb", buffering=0) as f:
            while f.read(1 << 24):
                pass
        rate = len(data) / (time.perf_counter() - start) / 1e9
    finally:
        os.close(fd)
        path.unlink()
    return rate


_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
stages = {}
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
from compiler.cli import main
import compiler.cli.compile as cc
printer = cc._progress_printer
times = {}
peaks = {}  # VmHWM at each stage's end: where the peak was reached
def progress(quiet):
    current = [None, time.perf_counter()]
    def report(stage):
        now = time.perf_counter()
        if current[0] is not None:
            times[current[0]] = times.get(current[0], 0) + now - current[1]
            peaks[current[0]] = hwm()
        current[0], current[1] = (None if stage == cc.DONE else stage), now
    return report
cc._progress_printer = progress
start = time.perf_counter()
code = main(sys.argv[2:])
wall = time.perf_counter() - start
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"code": code, "wall": wall, "stages": times, "peak_mb": hwm(),
                  "children_peak_mb": children, "stage_peaks_mb": peaks}))
"""

_ANSWER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
import compiler
art = compiler.load(sys.argv[2])
after_load = rss()
ids = np.random.default_rng(3).integers(0, int(sys.argv[4]), (1, 16)).astype(np.int64)
start = time.perf_counter()
out = art(ids)
first = time.perf_counter() - start
after_call = rss()
np.save(sys.argv[3], np.asarray(out).astype(np.float32))
anon = [int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("RssAnon")]
print(json.dumps({"rss_load_mb": after_load, "rss_call_mb": after_call, "anon_mb": anon[0],
                  "first_call_s": first}))
"""

_TORCH = r"""
import json, sys, torch, numpy as np, transformers
torch.set_num_threads(2)
lm = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16)
ids = np.random.default_rng(3).integers(0, int(sys.argv[3]), (1, 16)).astype(np.int64)
ids = torch.from_numpy(ids)
with torch.no_grad():
    out = lm(input_ids=ids, use_cache=False, logits_to_keep=1).logits[:, -1, :].float().numpy()
np.save(sys.argv[2], out)
print("{}")
"""


# fp8-current as torch fake-quantization (TE's rule: scale = 448 / amax in f32, amax 0 -> 1;
# codes by torch's own E4M3 cast; the GEMM in f32 on the dequantized operands), every nn.Linear
# of the bf16 model, lm_head included, as qmlir quantizes them: the recipe's own error on this
# model, apart from anything qmlir's compile does
_EMULATE = r"""
import json, sys, torch, numpy as np, transformers
torch.set_num_threads(2)
def fake_quant(t):
    t = t.float()
    amax = t.abs().max()
    scale = torch.where((amax > 0) & torch.isfinite(amax), 448.0 / amax, torch.ones_like(amax))
    return (t * scale).to(torch.float8_e4m3fn).float() * (1.0 / scale)
def forward(module, x):
    y = torch.nn.functional.linear(fake_quant(x), fake_quant(module.weight))
    if module.bias is not None:
        y = y + module.bias.float()
    return y.to(x.dtype)
lm = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16)
for m in lm.modules():
    if isinstance(m, torch.nn.Linear):
        m.forward = lambda x, m=m: forward(m, x)
ids = np.random.default_rng(3).integers(0, int(sys.argv[3]), (1, 16)).astype(np.int64)
with torch.no_grad():
    out = lm(input_ids=torch.from_numpy(ids), use_cache=False, logits_to_keep=1)
np.save(sys.argv[2], out.logits[:, -1, :].float().numpy())
print("{}")
"""


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def run_child(code: str, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT
    )
    if result.returncode != 0:
        raise SystemExit(f"child failed: {result.stderr[-3000:]}")
    data = json.loads(result.stdout.strip().splitlines()[-1])
    if data.get("code", 0) != 0:  # `qmlir compile` refused (its one-line error on stderr)
        raise SystemExit(f"qmlir {' '.join(args[1:3])} failed: {result.stderr[-3000:]}")
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["0.35b", "1.1b", "8b"], choices=SIZES)
    parser.add_argument("--recipes", nargs="+", default=["fp8-current", "fp8-block", "nvfp4"])
    parser.add_argument("--work", type=Path, default=None, help="where checkpoints are written")
    parser.add_argument("--keep", action="store_true", help="keep checkpoints and artifacts")
    parser.add_argument("--answer", action="store_true", help="run a 16-token prompt, vs torch")
    parser.add_argument(
        "--fp8-blocks", action="store_true", help="DeepSeek-style FP8 checkpoints, as stored"
    )
    parser.add_argument(
        "--cold", action="store_true", help="each compile from a cold page cache; read alone"
    )
    parser.add_argument(
        "--init",
        choices=["normal", "scaled"],
        default="normal",
        help="random weights: std 0.02 (normal), or residual outputs scaled by 1/sqrt(2 layers)",
    )
    args = parser.parse_args()
    if args.fp8_blocks:
        args.recipes = ["fp8-block"]
    work = args.work or Path(tempfile.mkdtemp(prefix="qmlir-llm-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    copy = copy_bandwidth()
    disk = disk_write_rate(work)
    disk_read = disk_read_rate(work)
    print(
        f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"copy {copy:.1f} GB/s, disk write {disk:.2f} GB/s (1 GiB, fsync), "
        f"disk read {disk_read:.2f} GB/s (1 GiB, not cached)"
    )
    rows = []
    for size in args.sizes:
        suffix = ("-fp8" if args.fp8_blocks else "") + ("-scaled" if args.init == "scaled" else "")
        folder = work / f"llama-{size}{suffix}"
        if not (folder / "config.json").is_file():
            start = time.perf_counter()
            nbytes = write_checkpoint(folder, size, fp8=args.fp8_blocks, init=args.init)
            print(
                f"{size}: wrote a {nbytes / 1e9:.2f} GB checkpoint in "
                f"{time.perf_counter() - start:.0f} s",
                flush=True,
            )
        nbytes = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
        largest = largest_tensor_bytes(size)
        target_mb = (3e9 + 2 * largest) / 1e6
        for recipe in args.recipes:
            out = work / f"{folder.name}.{recipe}.vmfb"
            if args.cold:
                drop_from_page_cache(folder)
            r = run_child(
                _CHILD, str(ROOT), "compile", str(folder), "--recipe", recipe, "-o", str(out), "-q"
            )
            params = out.with_name(out.name[: -len(".vmfb")] + ".params.safetensors")
            pbytes = params.stat().st_size
            stream = r["stages"].get("write weights", 0.0)
            code = r["stages"].get("quantize code", 0.0)
            bound = nbytes / (copy * 1e9) + pbytes / (disk * 1e9)
            bound_disk = nbytes / (disk_read * 1e9) + pbytes / (disk * 1e9)
            peak = max(r["peak_mb"], r["children_peak_mb"])
            stage_peaks = r.get("stage_peaks_mb", {})
            row = {
                "size": size
                + (" FP8 checkpoint" if args.fp8_blocks else "")
                + (" scaled init" if args.init == "scaled" else ""),
                "recipe": recipe,
                "checkpoint_gb": nbytes / 1e9,
                "compile_s": r["wall"],
                "weights_s": stream,
                "graph_s": r["wall"] - stream,
                "quantize_code_s": code,
                "ok_time": stream <= 1.5 * bound,
                "ok_time_disk": stream <= 1.5 * bound_disk,
                "bound_s": bound,
                "bound_disk_s": bound_disk,
                "peak_mb": r["peak_mb"],
                "iree_peak_mb": r["children_peak_mb"],
                "target_mb": target_mb,
                "ok_memory": peak <= target_mb,
                "artifact_mb": out.stat().st_size / 1e6,
                "params_gb": pbytes / 1e9,
                "stage_peaks_mb": stage_peaks,
            }
            print(json.dumps(row), flush=True)
            if args.answer:
                vocab = str(llama_config(size)["vocab_size"])
                answer = run_child(_ANSWER, str(ROOT), str(out), str(work / "q.npy"), vocab)
                reference = work / f"torch-{folder.name}.npy"
                if not reference.is_file():
                    run_child(_TORCH, str(folder), str(reference), vocab)
                q, t = np.load(work / "q.npy"), np.load(reference)
                row["cosine"] = cosine(q, t)
                if recipe == "fp8-current":
                    emulated = work / f"torch-fp8-{folder.name}.npy"
                    if not emulated.is_file():
                        run_child(_EMULATE, str(folder), str(emulated), vocab)
                    e = np.load(emulated)
                    row["emulated_cosine"] = cosine(e, t)
                    row["cosine_to_emulated"] = cosine(q, e)
                row.update(answer)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if not args.keep:
                out.unlink()
                params.unlink()
        if args.cold:
            alone = read_alone(folder)
            print(f"{size}: the checkpoint read alone from a cold page cache in {alone:.1f} s")
            for r in rows:
                if r["size"].split(" ")[0] == size:
                    r["read_alone_s"] = alone
        if not args.keep and args.work is None:
            for f in folder.iterdir():
                f.unlink()
            folder.rmdir()
    print()
    print(
        "| size | recipe | checkpoint | compile | graph (quantize code) | weights "
        "| weights bound: cached / from disk | read alone "
        "| peak RSS qmlir / iree-compile | target | artifact + params |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        alone = f"{r['read_alone_s']:.1f} s" if "read_alone_s" in r else ""
        print(
            f"| {r['size']} | {r['recipe']} | {r['checkpoint_gb']:.2f} GB | "
            f"{r['compile_s']:.0f} s | {r['graph_s']:.0f} s ({r['quantize_code_s']:.1f} s) | "
            f"{r['weights_s']:.1f} s | {r['bound_s']:.1f} / {r['bound_disk_s']:.1f} s | {alone} | "
            f"{r['peak_mb'] / 1e3:.2f} / {r['iree_peak_mb'] / 1e3:.2f} GB | "
            f"{r['target_mb'] / 1e3:.1f} GB | "
            f"{r['artifact_mb']:.1f} MB + {r['params_gb']:.2f} GB |"
        )
    if args.answer:
        print()
        print(
            "| size | recipe | params | RSS after 1 call (heap) | / params | first call | cosine |"
        )
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['size']} | {r['recipe']} | {r['params_gb']:.2f} GB | "
                f"{r['rss_call_mb'] / 1e3:.2f} GB ({r['anon_mb'] / 1e3:.2f}) | "
                f"{r['rss_call_mb'] / 1e3 / r['params_gb']:.2f} | {r['first_call_s']:.1f} s | "
                f"{r['cosine']:.5f} |"
            )
        emulated = [r for r in rows if "emulated_cosine" in r]
        if emulated:
            print()
            print("| size | torch fp8-current emulation vs torch bf16 | qmlir vs the emulation |")
            print("|---|---|---|")
            for r in emulated:
                print(
                    f"| {r['size']} | {r['emulated_cosine']:.5f} | {r['cosine_to_emulated']:.5f} |"
                )


if __name__ == "__main__":
    main()
