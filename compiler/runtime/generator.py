"""A generator artifact (``compile_generator``): a causal LM whose KV cache the module holds.
:meth:`Generator.generate` runs the prompt through ``@main`` once (the prefill) and then one
token per step (the decode), choosing each token greedily or by sampling.

``@main(input_ids [max_batch, T], start [1])`` writes the T tokens' keys and values at
positions ``start .. start+T-1`` of the cache and returns the last token's logits; ``@decode``
is the same with T = 1, its shapes static (a one-row GEMM, a command buffer IREE records once),
which a call of one token runs. Every call goes through :meth:`Generator.step`, which checks
that the positions fit the cache. A batch
smaller than the compiled maximum runs as it is (its sequences are the cache's first rows); an
artifact compiled before the batch was dynamic takes the maximum, and the runtime fills the other
rows with copies of the first and drops their tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.runtime.metadata import Generation
from compiler.runtime.module import CompiledModule
from compiler.runtime.tokenizer_store import unpack_tokenizer
from passes.base.abi import DECODE, ENTRY
from passes.base.errors import QmlirError

Streamer = Callable[[np.ndarray], None]  # each step's new tokens, [batch]


@dataclass(frozen=True)
class GenerationStats:
    """The last :meth:`Generator.generate`'s timing: the prefill (one call) and the decode
    steps (one call and one token choice each)."""

    prompt_tokens: int
    new_tokens: int
    prefill_s: float
    decode_s: float

    @property
    def prefill_tokens_per_s(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else float("inf")

    @property
    def decode_tokens_per_s(self) -> float:
        steps = self.new_tokens - 1  # the first new token comes from the prefill's logits
        return steps / self.decode_s if steps > 0 and self.decode_s > 0 else float("nan")


class Generator(CompiledModule):
    """A compiled causal LM with its KV cache: ``generate(input_ids, max_new_tokens=...)``."""

    last_stats: GenerationStats | None = None
    _tokenizer: Any = None

    @property
    def generation(self) -> Generation:
        record = self.record.generation
        assert record is not None, "a Generator's artifact is a generator's"
        return record

    @property
    def has_tokenizer(self) -> bool:
        """Whether the artifact stores a tokenizer (``compile_generator(..., tokenizer=)``, or
        the checkpoint folder's own)."""
        return self.generation.tokenizer is not None

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer stored in the artifact (built on first use)."""
        if self._tokenizer is None:
            files = self.generation.tokenizer
            if files is None:
                raise QmlirError(
                    "this generator stores no tokenizer: compile it from a checkpoint folder "
                    "with tokenizer files, or pass tokenizer= (qmlir compile --tokenizer DIR); "
                    "or give token ids"
                )
            self._tokenizer = unpack_tokenizer(files)
        return self._tokenizer

    def encode(self, prompts: str | list[str]) -> np.ndarray:
        """``prompts`` as token ids ``[batch, prompt]`` by the stored tokenizer (with its
        special tokens, as transformers' ``generate`` gets them); the prompts of a batch must
        come out the same length (the generator takes no padding mask)."""
        texts = [prompts] if isinstance(prompts, str) else list(prompts)
        if not texts or not all(isinstance(t, str) for t in texts):
            raise QmlirError("give a prompt string or a list of them")
        rows = [list(self.tokenizer(t)["input_ids"]) for t in texts]
        lengths = sorted({len(r) for r in rows})
        if len(lengths) > 1:
            raise QmlirError(
                f"the prompts are {', '.join(map(str, lengths))} tokens long: a batch of prompts "
                "must have one length (generate them one at a time)"
            )
        if lengths[0] == 0:
            raise QmlirError("the prompt is empty after tokenization")
        return np.array(rows, dtype=np.int64)

    def generate_text(
        self, prompts: str | list[str], max_new_tokens: int = 32, **options: Any
    ) -> list[str]:
        """Each prompt's continuation as text (:meth:`generate` on :meth:`encode`'s ids, the
        new ids decoded without special tokens; ``options`` are :meth:`generate`'s)."""
        ids = self.encode(prompts)
        out = self.generate(ids, max_new_tokens, **options)
        return [
            self.tokenizer.decode(row, skip_special_tokens=True) for row in out[:, ids.shape[1] :]
        ]

    def run_numpy(self, *inputs: np.ndarray) -> list[np.ndarray]:
        function = ENTRY
        if len(inputs) == 2:
            ids, start = np.asarray(inputs[0]), np.asarray(inputs[1])
            if ids.ndim == 2 and start.size == 1:
                self._check_positions(int(start.reshape(-1)[0]), ids.shape[1])
                if ids.shape[1] == 1 and self.has_decode:
                    function = DECODE  # one token: the decode function, its shapes static
        return self._run_checked(function, inputs)

    @property
    def has_decode(self) -> bool:
        """Whether the artifact has a decode function (``@decode``: ``@main`` with one token a
        call, its shapes static; ``passes/add_decode_step.py``), which :meth:`step` calls for
        one token; artifacts compiled before it call ``@main`` for every step."""
        return DECODE in self.function_names

    @property
    def dynamic_batch(self) -> bool:
        """Whether a call may hold fewer sequences than ``max_batch`` (else it holds exactly
        that many: a compile of ``max_batch=1``, or an artifact from before)."""
        dims = self.signature["inputs"][0].get("dims") or [None]
        return dims[0] is not None

    def step(self, input_ids: np.ndarray, start: int) -> np.ndarray:
        """Feeds ``input_ids`` ``[batch, T]`` at positions ``start ..``; the last token's
        logits ``[batch, vocab]`` (f32). The call writes those positions of every row of the
        cache (zeros past its batch): continue a sequence with calls of the same batch."""
        (logits,) = self.run_numpy(
            np.ascontiguousarray(input_ids, dtype=np.int64), np.array([start], np.int64)
        )
        return logits

    def generate(
        self,
        input_ids: Any,
        max_new_tokens: int = 32,
        *,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        eos_token_id: int | list[int] | None = None,
        streamer: Streamer | None = None,
    ) -> np.ndarray:
        """The prompt ids ``[batch, prompt]`` (or ``[prompt]``) followed by up to
        ``max_new_tokens`` new ones, ``[batch, prompt + new]`` int64. ``temperature`` 0 is
        greedy (argmax; ties to the lowest id); above 0 samples from the softmax of the logits
        over ``temperature``, kept to the ``top_k`` most likely and the smallest set reaching
        ``top_p`` (``seed`` fixes the draw). A sequence stops at an ``eos_token_id`` (default:
        the model's); it is padded with the pad id (else its end id) while others go on, and
        generation stops when all have stopped. ``streamer`` is called with each step's tokens."""
        g = self.generation
        ids = _prompt(input_ids, g)
        if max_new_tokens < 1:
            raise QmlirError(f"max_new_tokens is {max_new_tokens}: ask for at least 1")
        batch, prompt = ids.shape
        if prompt + max_new_tokens > g.max_seq:
            raise QmlirError(
                f"a {prompt}-token prompt and {max_new_tokens} new tokens need "
                f"{prompt + max_new_tokens} positions; the cache holds {g.max_seq} "
                "(compile with a larger --max-seq-len)"
            )
        stops = _stop_ids(eos_token_id, g)
        pad = g.pad_token_id if g.pad_token_id is not None else int(stops[0]) if stops.size else 0
        choose = _chooser(temperature, top_k, top_p, seed)
        fill = 0 if self.dynamic_batch else g.max_batch - batch  # rows the artifact needs
        rows = np.concatenate([ids, np.repeat(ids[:1], fill, axis=0)])
        began = time.perf_counter()
        logits = self.step(rows, 0)
        prefilled = time.perf_counter()
        out = [ids]
        done = np.zeros(batch, dtype=bool)
        for n in range(max_new_tokens):
            token = choose(logits[:batch])
            token = np.where(done, pad, token)
            done |= np.isin(token, stops)
            out.append(token[:, None])
            if streamer is not None:
                streamer(token)
            if done.all() or n == max_new_tokens - 1:
                break
            column = np.concatenate([token, np.repeat(token[:1], fill)])
            logits = self.step(column[:, None], prompt + n)
        ended = time.perf_counter()
        result = np.concatenate(out, axis=1)
        self.last_stats = GenerationStats(
            prompt, result.shape[1] - prompt, prefilled - began, ended - prefilled
        )
        return result

    def _check_positions(self, start: int, tokens: int) -> None:
        g = self.generation
        if start < 0 or start + tokens > g.max_seq:
            raise QmlirError(
                f"tokens at positions {start}..{start + tokens - 1} do not fit the cache's "
                f"{g.max_seq} positions"
            )


def _prompt(input_ids: Any, g: Generation) -> np.ndarray:
    if hasattr(input_ids, "detach"):  # a torch tensor
        input_ids = input_ids.detach().cpu().numpy()
    try:
        ids = np.asarray(input_ids)
    except ValueError:  # numpy refuses ragged rows
        lengths = sorted({len(row) if hasattr(row, "__len__") else 1 for row in input_ids})
        raise QmlirError(
            f"the prompts are {', '.join(map(str, lengths))} tokens long: a batch of prompts "
            "must have one length (generate them one at a time)"
        ) from None
    if ids.ndim == 1:
        ids = ids[None, :]
    if ids.ndim != 2 or ids.shape[1] == 0 or ids.shape[0] == 0:
        raise QmlirError(f"input_ids has shape {list(ids.shape)}: give [batch, prompt] token ids")
    if not np.issubdtype(ids.dtype, np.integer):
        raise QmlirError(f"input_ids are {ids.dtype}, not integer token ids")
    if ids.shape[0] > g.max_batch:
        raise QmlirError(
            f"a batch of {ids.shape[0]} prompts; the generator was compiled for at most "
            f"{g.max_batch} (--max-batch)"
        )
    bad = (ids < 0) | (ids >= g.vocab)
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise QmlirError(
            f"input_ids[{row}, {col}] is {int(ids[row, col])}, outside the vocabulary "
            f"(0..{g.vocab - 1})"
        )
    return ids.astype(np.int64)


def _stop_ids(eos_token_id: int | list[int] | None, g: Generation) -> np.ndarray:
    if eos_token_id is None:
        return np.array(g.eos_token_ids, dtype=np.int64)
    ids = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id)
    return np.array(ids, dtype=np.int64)


def _chooser(
    temperature: float, top_k: int | None, top_p: float | None, seed: int | None
) -> Callable[[np.ndarray], np.ndarray]:
    if temperature < 0 or not np.isfinite(temperature):
        raise QmlirError(f"temperature {temperature} is not a finite number >= 0")
    if top_k is not None and top_k < 1:
        raise QmlirError(f"top_k {top_k} is not >= 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise QmlirError(f"top_p {top_p} is not in (0, 1]")
    if temperature == 0:
        return lambda logits: np.argmax(logits, axis=-1).astype(np.int64)
    rng = np.random.default_rng(seed)

    def sample(logits: np.ndarray) -> np.ndarray:
        scaled = logits.astype(np.float64) / temperature
        if top_k is not None and top_k < scaled.shape[-1]:
            kth = np.partition(scaled, -top_k, axis=-1)[:, -top_k][:, None]
            scaled = np.where(scaled < kth, -np.inf, scaled)
        probs = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
        probs /= probs.sum(axis=-1, keepdims=True)
        if top_p is not None and top_p < 1:
            order = np.argsort(-probs, axis=-1, kind="stable")
            sorted_probs = np.take_along_axis(probs, order, axis=-1)
            before = np.cumsum(sorted_probs, axis=-1) - sorted_probs
            keep = np.zeros_like(probs, dtype=bool)
            np.put_along_axis(keep, order, before < top_p, axis=-1)
            probs = np.where(keep, probs, 0.0)
            probs /= probs.sum(axis=-1, keepdims=True)
        return np.array([rng.choice(p.shape[-1], p=p) for p in probs], dtype=np.int64)

    return sample
