"""The compile of a generator (``compile_generator``): a causal LM with its KV cache held by the
module (``compiler/frontend/cached_decoder.py``), compiled as an inference model whose mutated
buffers the module keeps (``inference.py``).

``@main(input_ids [batch, T], start [1]) -> logits [batch, vocab] f32``: T is dynamic
(1 .. ``max_seq``), and so is the batch (1 .. ``max_batch``; the call's sequences are the
cache's first rows); ``@decode`` is the same with T = 1, its shapes static from it
(``passes/add_decode_step.py``), for the decode steps. The result is a
:class:`~compiler.runtime.generator.Generator`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from compiler.frontend.cached_decoder import KV_CACHES, CachedDecoder, is_causal_lm
from compiler.frontend.checkpoint import materialize, open_checkpoint
from compiler.frontend.model_source import ModelSource
from compiler.pipeline.inference import compile_model
from compiler.pipeline.options import CompileOptions, Progress, check_weights
from compiler.runtime.generator import Generator
from compiler.runtime.metadata import Generation
from compiler.runtime.tokenizer_store import pack_folder, pack_tokenizer
from passes.base.errors import QmlirError

MAX_GENERATOR_BATCH = 64


def compile_generator_model(
    model: nn.Module | Path,
    options: CompileOptions,
    *,
    max_seq: int | None,
    max_batch: int = 1,
    kv_cache: str = "model",
    progress: Progress | None = None,
    scratch: Path | None = None,
    parameters_name: str | None = None,
    tokenizer: Any = None,
) -> Generator:
    """``model``: a transformers causal LM or a checkpoint folder holding one; ``max_seq``: the
    cache's positions (prompt and new tokens; default and limit the config's
    ``max_position_embeddings``); ``tokenizer``: a transformers tokenizer or its folder, stored
    in the artifact (default: a folder model's own tokenizer files, if it has them)."""
    check_weights(options)
    if kv_cache not in KV_CACHES:
        raise QmlirError(
            f"kv_cache '{kv_cache}' is not implemented (choose from {', '.join(KV_CACHES)})"
        )
    if kv_cache == "fp8" and options.target.device != "llvm-cpu":
        raise QmlirError(
            "kv_cache 'fp8' compiles for llvm-cpu only (its dequantize has no cuda kernel yet)"
        )
    if not 1 <= max_batch <= MAX_GENERATOR_BATCH:
        raise QmlirError(f"max_batch {max_batch} is out of range (1..{MAX_GENERATOR_BATCH})")
    reader = None
    if isinstance(model, Path):
        opened = open_checkpoint(model)
        lm, name, limit = opened.model, model.resolve().name, opened.max_positions
    else:
        lm, name, opened = model, type(model).__name__, None
    if not is_causal_lm(lm):
        raise QmlirError(_not_causal_lm(lm))
    if opened is None:
        limit = int(getattr(lm.config.get_text_config(), "max_position_embeddings", 0) or 4096)
    max_seq = limit if max_seq is None else max_seq
    if not 2 <= max_seq <= limit:
        raise QmlirError(f"max_seq_len {max_seq} is out of range (2..{limit}, the config's)")
    if opened is not None and options.weights == "inline":
        quantized = opened.prequantized(lm)
        if quantized is not None:
            raise QmlirError(quantized.inline_refusal())
        # the weights inside the module: the whole model in memory, as transformers holds it
        materialize(ModelSource(name, lm, (), reader=opened.reader(lm)))
        opened = None
    decoder = CachedDecoder(lm.eval(), max_batch, max_seq, kv_cache, options.rows_apart).eval()
    stored = None
    if opened is not None:
        reader = opened.reader(decoder)
        stored = opened.prequantized(decoder)
    tokens = torch.export.Dim("tokens", min=1, max=max_seq)
    dims: dict[int, Any] = {1: tokens}
    if max_batch > 1:  # a call with fewer sequences computes only theirs
        dims[0] = torch.export.Dim("batch", min=1, max=max_batch)
    example = (torch.zeros((max_batch, 2), dtype=torch.int64), torch.zeros(1, dtype=torch.int64))
    source = ModelSource(
        name,
        decoder,
        example,
        dynamic_shapes=(dims, None),
        reader=reader,
        prequantized=stored,
    )
    if tokenizer is not None:
        packed = pack_tokenizer(tokenizer)
    else:
        packed = pack_folder(model) if isinstance(model, Path) else None
    generation = _generation(lm, decoder, max_batch, max_seq, kv_cache, packed)
    extra: dict[str, Any] = {} if parameters_name is None else {"parameters_name": parameters_name}
    compiled = compile_model(source, options, progress, scratch, generation=generation, **extra)
    assert isinstance(compiled, Generator)
    return compiled


def _not_causal_lm(model: Any) -> str:
    """The refusal of a model that is no transformers causal LM, naming the causal LM it wraps
    (as ``samples/decoder_lm.py:build``'s next-token wrapper does), if any."""
    kind = type(model).__name__
    message = f"a generator is compiled from a transformers *ForCausalLM, not {kind}"
    if isinstance(model, nn.Module):
        inner = next((n for n, m in model.named_children() if is_causal_lm(m)), None)
        if inner is not None:
            message += f" (it wraps one as .{inner}: compile that module)"
    return message


def _generation(
    lm: nn.Module,
    decoder: CachedDecoder,
    max_batch: int,
    max_seq: int,
    kv_cache: str,
    tokenizer: dict[str, str] | None,
) -> Generation:
    config = lm.config.get_text_config()
    generation_config = getattr(lm, "generation_config", None)
    eos = getattr(generation_config, "eos_token_id", None)
    if eos is None:
        eos = getattr(config, "eos_token_id", None)
    eos_ids = tuple(
        int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None
    )
    pad = getattr(generation_config, "pad_token_id", None)
    if pad is None:
        pad = getattr(config, "pad_token_id", None)
    keys = decoder.cache.layers[0].keys
    return Generation(
        max_batch=max_batch,
        max_seq=max_seq,
        vocab=int(config.vocab_size),
        layers=len(decoder.cache.layers),
        kv_cache=kv_cache,
        cache_dtype={"float32": "f32", "bfloat16": "bf16", "float16": "f16", "uint8": "e4m3"}[
            str(keys.dtype).removeprefix("torch.")
        ],
        eos_token_ids=eos_ids,
        pad_token_id=None if pad is None else int(pad),
        tokenizer=tokenizer,
    )
