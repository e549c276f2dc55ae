"""A generator (``compile_generator``): a causal LM whose KV cache the module holds. Greedy
tokens match transformers' ``generate`` on every architecture the generator supports; each
decode step's logits match the artifact's own prefill at the same position (bit for bit where
the recipe scales per token); the CLI generates; bad requests are one-line errors."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import compiler
from compiler.runtime import Generator
from passes.base.abi import DECODE, ENTRY
from passes.base.errors import QmlirError
from samples.decoder_lm import NextTokenLogits
from tests.e2e import checkpoints
from tests.e2e.cli_runner import run as cli
from tests.e2e.filecheck import filecheck
from tests.e2e.python_child import run_python

pytestmark = pytest.mark.models  # compiles models: not in `make test-fast`

PROMPT, NEW, MAX_SEQ = 8, 64, 80


def _prompt(seed: int = 1, batch: int = 1, length: int = PROMPT) -> np.ndarray:
    ids = torch.randint(0, 256, (batch, length), generator=torch.Generator().manual_seed(seed))
    return ids.numpy()


def _transformers_greedy(lm: torch.nn.Module, ids: np.ndarray, new: int) -> np.ndarray:
    with torch.no_grad():
        out = lm.generate(
            torch.from_numpy(ids), max_new_tokens=new, min_new_tokens=new, do_sample=False
        )
    return out.numpy()


@pytest.mark.parametrize("arch", checkpoints.DECODERS)
def test_greedy_tokens_match_transformers(arch: str) -> None:
    """64 new tokens under ``none``, the same as transformers' greedy ``generate`` in f32."""
    lm = checkpoints.decoder(arch)
    gen = compiler.compile_generator(lm, recipe="none", max_seq_len=MAX_SEQ)
    ids = _prompt()
    out = gen.generate(ids, max_new_tokens=NEW, eos_token_id=[])
    np.testing.assert_array_equal(out, _transformers_greedy(lm, ids, NEW))
    stats = gen.last_stats
    assert stats is not None and (stats.prompt_tokens, stats.new_tokens) == (PROMPT, NEW)


@pytest.fixture(scope="module")
def lm() -> torch.nn.Module:
    return checkpoints.llama(max_position_embeddings=128)


_GENERATORS: dict[tuple[str, int, int], Generator] = {}


def _generator(
    lm: torch.nn.Module, recipe: str, max_seq: int = 48, max_batch: int = 3
) -> Generator:
    """One compile per recipe and size for the module's tests (``lm`` is the same model)."""
    key = (recipe, max_seq, max_batch)
    if key not in _GENERATORS:
        _GENERATORS[key] = compiler.compile_generator(
            lm, recipe=recipe, max_seq_len=max_seq, max_batch=max_batch
        )
    return _GENERATORS[key]


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize(("recipe", "one_row"), [("mxfp8", True), ("fp8-current", False)])
def test_the_last_mlp_takes_the_last_position_where_rows_are_quantized_apart(
    lm, recipe: str, one_row: bool, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The prefill returns the last position's logits: where the recipe quantizes each
    activation row alone, the last layer's MLP runs on that position only
    (compiler/frontend/final_norm.py); with a per-tensor scale (fp8-current) on every one, its
    scale the prompt's."""
    compiler.compile_generator(lm, recipe=recipe, max_seq_len=32, max_batch=2, dump_ir=tmp_path)
    filecheck(checkpoints.last_mlp_checks(one_row), tmp_path / "01-import.mlir")


@pytest.mark.parametrize("recipe", ["fp8-block", "fp8-current"])
def test_decode_steps_match_the_prefill(lm, recipe: str) -> None:  # type: ignore[no-untyped-def]
    """A token decoded at position p gives the logits a prefill of the first p+1 tokens gives:
    bit for bit where activations are scaled per token (fp8-block's 1x128 blocks; mxfp8's 1x32
    alike); with a per-tensor scale (fp8-current's; nvfp4's global scale alike) the one-token
    step has its own scale, so it is judged against torch's f32 logits: no further from them
    than the prefill is."""
    gen = _generator(lm, recipe)
    seq = _prompt(seed=3, length=16)
    with torch.no_grad():
        full = lm(torch.from_numpy(seq)).logits[0].numpy()
    rows = np.repeat(seq, 3, axis=0)  # the compiled batch, 3
    gen.step(rows[:, :4], 0)
    decoded = [gen.step(rows[:, p : p + 1], p)[0] for p in range(4, 16)]
    prefilled = [gen.step(rows[:, : p + 1], 0)[0] for p in range(4, 16)]
    for p, step, pre in zip(range(4, 16), decoded, prefilled, strict=True):
        if recipe == "fp8-block":
            np.testing.assert_array_equal(step, pre)
        else:
            assert _rel(step, full[p]) <= 1.5 * _rel(pre, full[p]) + 0.02, p


@pytest.mark.parametrize("recipe", ["none", "fp8-block", "fp8-current"])
def test_a_step_of_one_token_runs_the_decode_function(lm, recipe: str) -> None:  # type: ignore[no-untyped-def]
    """A generator has ``@decode`` (``@main`` with one token a call, its shapes static) beside
    ``@main``; a step of one token runs it, a step of more runs ``@main``, and the two give
    one token the same logits up to the order of their f32 sums (they compile apart; under
    fp8-current, on a CPU with AVX512-BF16 and -VBMI, ``@decode``'s GEMMs are the decoding
    matrix-vector products of ``decode-gemv``)."""
    gen = compiler.compile_generator(lm, recipe=recipe, max_seq_len=40)  # batch static: 1
    assert gen.has_decode and gen.function_names[:2] == [ENTRY, DECODE]
    called: list[str] = []
    call = gen._call

    def recording(name: str, *args: np.ndarray) -> list[np.ndarray]:
        called.append(name)
        return call(name, *args)

    gen._call = recording  # type: ignore[method-assign]
    ids = _prompt(seed=4, length=12)
    gen.step(ids[:, :11], 0)
    by_decode = gen.step(ids[:, 11:], 11)
    gen.step(ids[:, :11], 0)
    (by_main,) = gen._run_checked(ENTRY, (ids[:, 11:], np.array([11])))
    assert called == [ENTRY, DECODE, ENTRY, ENTRY]
    assert _rel(by_decode, by_main) < 1e-6, _rel(by_decode, by_main)


def test_a_generator_saves_loads_and_generates_the_same(lm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gen = _generator(lm, "fp8-block")
    ids = _prompt(seed=5, batch=2, length=6)
    first = gen.generate(ids, max_new_tokens=20, eos_token_id=[])
    again = gen.generate(ids, max_new_tokens=20, eos_token_id=[])  # no reset needed
    np.testing.assert_array_equal(first, again)
    gen.save(tmp_path / "gen.vmfb")
    loaded = compiler.load(tmp_path / "gen.vmfb")
    assert isinstance(loaded, Generator) and loaded.generation == gen.generation
    np.testing.assert_array_equal(loaded.generate(ids, max_new_tokens=20, eos_token_id=[]), first)
    # rows are independent where activations are scaled per token (under a per-tensor scale,
    # such as fp8-current's, a batch shares each activation's scale, as in TE)
    alone = loaded.generate(ids[1:], max_new_tokens=20, eos_token_id=[])
    np.testing.assert_array_equal(alone[0], first[1])
    # a sequence that reaches an end id stops there, padded while the others go on
    stop = int(first[0, 6 + 3])
    ended = loaded.generate(ids, max_new_tokens=20, eos_token_id=stop)
    row = list(first[0, 6:])
    cut = row.index(stop)
    assert list(ended[0, 6 : 6 + cut + 1]) == row[: cut + 1]
    assert all(t == stop for t in ended[0, 6 + cut + 1 :])  # llama has no pad id: its end id


def test_a_decode_step_waits_for_nothing_mid_call(lm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The cache positions need no index check (``start + arange`` modulo the cache's length,
    which ``check-indices`` knows, then written as a slice by ``slice-cache-writes``): no
    ``torch.runtime.assert`` in ``@main``, whose reduction and host read would each stop the
    call for the device (0.4 ms apiece on an H200)."""
    compiler.compile_generator(lm, recipe="fp8-block", max_seq_len=32, dump_ir=tmp_path)
    filecheck(
        "CHECK-LABEL: func.func @main\n"
        "CHECK-NOT: torch.runtime.assert\n"
        "CHECK: torch.aten.slice_scatter\n"
        "CHECK-NOT: torch.runtime.assert\n"
        "CHECK: return\n",
        tmp_path / "04-lower.mlir",
    )


def test_a_smaller_batch_computes_only_its_rows(lm) -> None:  # type: ignore[no-untyped-def]
    """The batch is dynamic (1 .. max_batch): one or two prompts on a 3-row generator give
    transformers' greedy tokens, and the artifact's calls take just those rows."""
    gen = _generator(lm, "none")
    assert gen.dynamic_batch and gen.generation.max_batch == 3
    ids = _prompt(seed=8, batch=2, length=6)
    for batch in (ids[:1], ids):
        out = gen.generate(batch, max_new_tokens=16, eos_token_id=[])
        np.testing.assert_array_equal(out, _transformers_greedy(lm, batch, 16))
    assert gen.step(ids, 0).shape == (2, lm.config.vocab_size)


def test_sampling_is_seeded_and_stays_in_the_top_k(lm) -> None:  # type: ignore[no-untyped-def]
    gen = _generator(lm, "none")
    ids = _prompt(seed=6)
    a = gen.generate(ids, 24, temperature=0.8, top_k=5, seed=7, eos_token_id=[])
    b = gen.generate(ids, 24, temperature=0.8, top_k=5, seed=7, eos_token_id=[])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, gen.generate(ids, 24, eos_token_id=[]))  # not greedy
    seen: list[np.ndarray] = []
    gen.generate(ids, 24, temperature=0.8, top_k=1, seed=9, streamer=seen.append, eos_token_id=[])
    greedy = gen.generate(ids, 24, eos_token_id=[])
    np.testing.assert_array_equal(np.concatenate(seen), greedy[0, PROMPT:])  # top_k=1: argmax


def test_a_folder_generates_with_its_weights_outside(
    lm, tmp_path: Path, capsys, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A folder's generator keeps its weights in a parameter file and, by default
    (``--pack-weights auto``), packs them once at load (``decoded``: IREE's flag that hoists
    every expression over the parameters), not in every decode step."""
    from passes.host.flags import HOIST_ALL_FLAG
    from tests.e2e.iree_flags import record_iree_flags

    seen = record_iree_flags(monkeypatch)
    folder = checkpoints.save(lm, tmp_path / "llama")
    out = tmp_path / "gen.vmfb"
    code, stdout, err = cli(
        capsys,
        "compile", str(folder), "--generate", "--max-seq-len", "40", "--recipe", "none",
        "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert len(seen) == 1 and HOIST_ALL_FLAG in seen[0]
    assert "generator: 40 positions x 1 sequences" in stdout
    assert (tmp_path / "gen.params.safetensors").is_file()
    ids = _prompt(seed=8)
    expected = _transformers_greedy(lm, ids, 16)
    prompt = ",".join(str(int(t)) for t in ids[0])
    code, stdout, err = cli(
        capsys, "generate", str(out), "--prompt-ids", prompt, "--max-new-tokens", "16",
        "--ignore-eos",
    )  # fmt: skip
    assert code == 0, err
    assert [int(t) for t in stdout.split()] == list(expected[0, PROMPT:])
    assert "prefill 8 tokens" in err and "decode 15 tokens" in err
    code, stdout, _ = cli(capsys, "inspect", str(out))
    assert code == 0 and "no tokenizer stored" in stdout
    assert "decode(input_ids: si64[1, 1] in 0..255, start: si64[1])" in stdout
    code, _, err = cli(capsys, "generate", str(out), "--prompt", "hi")
    assert code != 0 and "stores no tokenizer" in err and len(err.strip().splitlines()) == 1


def test_a_folder_with_a_tokenizer_generates_from_text(lm, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The folder's tokenizer is stored in the artifact: ``--prompt TEXT`` tokenizes with it
    and prints the decoded continuation, the same text as transformers' greedy generate; the
    API's ``generate_text`` and a saved and loaded generator agree."""
    tokenizer = checkpoints.byte_tokenizer()
    folder = checkpoints.save(lm, tmp_path / "llama")
    tokenizer.save_pretrained(str(folder))
    out = tmp_path / "gen.vmfb"
    code, _, err = cli(
        capsys, "compile", str(folder), "--generate", "--max-seq-len", "40", "--recipe", "none",
        "-o", str(out), "-q",
    )  # fmt: skip
    assert code == 0, err
    code, stdout, _ = cli(capsys, "inspect", str(out))
    assert code == 0 and "tokenizer stored (tokenizer.json, tokenizer_config.json" in stdout
    text = "qmlir says hi"
    ids = np.array([tokenizer(text)["input_ids"]])
    new = _transformers_greedy(lm, ids, 12)[0, ids.shape[1] :]
    expected = tokenizer.decode(new, skip_special_tokens=True)
    code, stdout, err = cli(
        capsys, "generate", str(out), "--prompt", text, "--max-new-tokens", "12", "--ignore-eos"
    )
    assert code == 0, err
    assert stdout == expected + "\n"
    assert f"prefill {ids.shape[1]} tokens" in err
    gen = compiler.load(out)
    assert isinstance(gen, Generator) and gen.has_tokenizer
    assert gen.generate_text(text, 12, eos_token_id=[]) == [expected]
    np.testing.assert_array_equal(gen.encode([text, text]), np.concatenate([ids, ids]))
    with pytest.raises(QmlirError, match="must have one length"):
        gen.encode([text, "x"])


def test_bad_requests_are_one_line_errors(lm, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    gen = _generator(lm, "none")
    cases = {
        "need 50 positions; the cache holds 48": lambda: gen.generate(_prompt(), 42),
        r"is 256, outside the vocabulary \(0..255\)": lambda: gen.generate(
            np.array([[1, 256, 3]]), 2
        ),
        "compiled for at most 3": lambda: gen.generate(_prompt(batch=4), 2),
        "do not fit the cache's 48 positions": lambda: gen.step(np.zeros((3, 4), np.int64), 45),
        "not a finite number >= 0": lambda: gen.generate(_prompt(), 2, temperature=-1.0),
        "ask for at least 1": lambda: gen.generate(_prompt(), 0),
        "the prompts are 2, 3 tokens long: a batch of prompts must have one length": lambda: (
            gen.generate([[1, 2, 3], [4, 5]], 2)
        ),
    }
    for message, request in cases.items():
        with pytest.raises(QmlirError, match=message):
            request()
    with pytest.raises(QmlirError, match="max_seq_len 200 is out of range"):
        compiler.compile_generator(lm, recipe="none", max_seq_len=200)
    with pytest.raises(QmlirError, match="from a transformers \\*ForCausalLM"):
        compiler.compile_generator(checkpoints.bert(), recipe="none", max_seq_len=16)
    # a wrapper without a config (samples/decoder_lm.py:build's) is refused, naming what it wraps
    with pytest.raises(QmlirError, match=r"not NextTokenLogits \(it wraps one as \.lm"):
        compiler.compile_generator(NextTokenLogits(lm), recipe="none", max_seq_len=16)
    gen.save(tmp_path / "g.vmfb")
    for argv, message in (
        (["--prompt-ids", "1,x"], "give comma-separated token ids"),
        (["--prompt-ids", "1,2", "--prompt-ids", "3"], "one length"),
        (["--prompt-ids", "1,2", "--max-new-tokens", "50"], "the cache holds 48"),
    ):
        code, _, err = cli(capsys, "generate", str(tmp_path / "g.vmfb"), *argv)
        assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err
    code, _, err = cli(
        capsys, "compile", "samples/decoder_lm.py", "--generate", "-o", str(tmp_path / "w.vmfb")
    )
    assert code != 0 and "it wraps one as .lm: compile that module" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "w.vmfb").exists()
    code, _, err = cli(capsys, "compile", "x", "--max-seq-len", "8")
    assert code != 0 and "need --generate" in err


def test_a_mutated_buffer_keeps_its_state_across_calls() -> None:
    """A model that counts its calls in a buffer: the artifact counts as torch does, and its
    buffers can be read and reset (issue: silent wrong output from models with state)."""

    class Counting(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(64, 32)
            self.register_buffer("count", torch.zeros(()))
            self.register_buffer("offset", torch.full((32,), 0.5))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.count += 1
            self.offset.mul_(2.0)
            return self.fc(x) + self.count + self.offset

    torch.manual_seed(0)
    model, x = Counting().eval(), torch.randn(8, 64)
    reference = Counting().eval()
    reference.load_state_dict(model.state_dict())
    art = compiler.compile(model, (x,), recipe="fp8-current")
    assert [(b.name, b.zeros) for b in art.record.buffers] == [("count", True), ("offset", False)]
    for _ in range(3):
        with torch.no_grad():
            expected = reference(x).numpy()
        got = art(x.numpy())
        assert got.shape == (8, 32)
        assert abs(float((got - expected).mean())) < 0.05  # fp8 noise, not a missed count
    state = art.buffers()
    assert float(state["count"]) == 3.0 and np.all(state["offset"] == 4.0)
    art.reset_buffers()
    assert float(art.buffers()["count"]) == 0.0 and np.all(art.buffers()["offset"] == 0.5)
    # concurrent callers: calls are serialized, so no update is lost (4 threads x 25 calls)
    threads = [
        threading.Thread(target=lambda: [art(x.numpy()) for _ in range(25)]) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert float(art.buffers()["count"]) == 100.0


def test_a_model_whose_shapes_cannot_be_refined_generates_without_decode(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where torch-mlir's shape refinement fails on a model (an op its shape library does not
    know), the generator compiles without ``@decode``, with a warning that says so, and its
    steps run ``@main``: the same tokens."""
    from compiler.pipeline.inference import DecodeStepWarning
    from passes import add_decode_step

    lm = checkpoints.llama(max_position_embeddings=64)
    ids = _prompt(seed=6)
    want = compiler.compile_generator(lm, "none", max_seq_len=32).generate(ids, 8)

    class Failing:
        @staticmethod
        def parse(pipeline: str) -> Any:
            raise RuntimeError("no shape function for torch.aten.unknown_op")

    monkeypatch.setattr(add_decode_step, "PassManager", Failing)
    with pytest.warns(DecodeStepWarning, match="could not make @decode static.*run @main"):
        gen = compiler.compile_generator(lm, "none", max_seq_len=32)
    assert not gen.has_decode and DECODE not in gen.function_names
    np.testing.assert_array_equal(gen.generate(ids, 8), want)


def test_fp8_delayed_prefill_and_decode_advance_one_history_per_layer() -> None:
    """Under fp8-delayed, ``@main`` and ``@decode`` share each layer's amax history and scale
    (TE's module keeps one over all its forwards): one state per quantized layer, and a prefill
    then a decode step each add an amax to it."""
    lm = checkpoints.llama(max_position_embeddings=64)
    gen = compiler.compile_generator(lm, "fp8-delayed", max_seq_len=32)
    assert gen.has_decode
    quantized = {layer.layer for layer in gen.record.layers if layer.recipe != "none"}
    assert {entry.key for entry in gen.record.scaling_state} == quantized
    ids = _prompt(seed=7)
    gen.step(ids, 0)  # @main
    gen.step(ids[:, :1], PROMPT)  # @decode
    for key, state in gen.scaling_state().items():
        assert np.count_nonzero(state["amax_history"]) == 2, key


_FIRST_CALL_PEAK = r"""
import json, sys, numpy as np
import compiler  # keeps freed memory, as `qmlir` does
art = compiler.load(sys.argv[1])
def hwm():
    return [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
before = hwm()
out = art(np.ones((4, 64), np.float32))
print(json.dumps({"grew_mb": (hwm() - before) / 1024, "out": out.tolist()}))
"""


class _BigState(torch.nn.Module):
    """A 64 MB zero-initialized buffer (as a KV cache is) that each call writes a row of."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(64, 64)
        self.register_buffer("state", torch.zeros(4096, 4096))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.state[0, :64].copy_(x[0])
        return self.fc(x) + self.state[0, :64]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_zero_buffer_costs_its_bytes_once_at_the_first_call(tmp_path: Path) -> None:
    """The module's zero-initialized buffers are set from zeros on pages nothing writes,
    imported rather than copied (``compiler/runtime/zero_pages.py``): the first call of a
    module holding 64 MB of them grows the process by those 64 MB once. Passed as ``np.zeros``
    it grew by two to three times that (IREE's copy of each argument, the host arrays)."""
    torch.manual_seed(0)
    model, x = _BigState().eval(), torch.ones(4, 64)
    art = compiler.compile(model, (x,), recipe="none")
    assert [(b.name, b.zeros) for b in art.record.buffers] == [("state", True)]
    art.save(tmp_path / "state.vmfb")
    measured = run_python(_FIRST_CALL_PEAK, str(tmp_path / "state.vmfb"))
    with torch.no_grad():
        expected = _BigState().eval()
        expected.load_state_dict(model.state_dict())
        np.testing.assert_allclose(measured["out"], expected(x).numpy(), rtol=1e-6, atol=1e-6)
    assert 64 <= measured["grew_mb"] < 64 * 1.5, measured["grew_mb"]
