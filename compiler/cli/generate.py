"""``qmlir generate``: run a generator artifact (``qmlir compile --generate``) on a prompt.

Needs only the runtime. The prompt is token ids (``--prompt-ids 1,2,3``; repeat the flag for a
batch of prompts of one length). With one prompt, each new token id is printed as it is
produced; with several, each sequence's new ids on a line at the end. Then the prefill's and the
decode's tokens per second.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from compiler.runtime import Generator, load
from passes.base.errors import QmlirError

NAME = "generate"
HELP = "generate tokens with a generator artifact (qmlir compile --generate)"


def add_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument("artifact", help="a generator written by qmlir compile --generate")
    g.add_argument(
        "--prompt-ids",
        action="append",
        required=True,
        metavar="IDS",
        help="the prompt's token ids, comma-separated (repeat for a batch; equal lengths)",
    )
    g.add_argument("--max-new-tokens", type=int, default=32, metavar="N", help="default: 32")
    g.add_argument(
        "--temperature", type=float, default=0.0, help="0 (default): greedy; above: sampling"
    )
    g.add_argument("--top-k", type=int, metavar="K", help="sample among the K likeliest")
    g.add_argument("--top-p", type=float, metavar="P", help="sample in the nucleus of mass P")
    g.add_argument("--seed", type=int, help="the sampling's seed")
    g.add_argument(
        "--eos",
        type=int,
        action="append",
        metavar="ID",
        help="a token id that ends a sequence (repeatable; default: the model's)",
    )
    g.add_argument(
        "--ignore-eos", action="store_true", help="generate --max-new-tokens whatever comes"
    )
    g.add_argument("--parameters", metavar="FILE", help="the parameter file (default: beside it)")
    g.add_argument("--device", default="", help="IREE driver (default: the artifact's target's)")


def run(args: argparse.Namespace) -> int:
    prompts = [_ids(text) for text in args.prompt_ids]
    if len({len(p) for p in prompts}) > 1:
        raise QmlirError("--prompt-ids: the prompts of a batch have one length")
    if args.ignore_eos and args.eos:
        raise QmlirError("--ignore-eos and --eos contradict each other")
    generator = load(args.artifact, device=args.device, parameters=args.parameters)
    if not isinstance(generator, Generator):
        raise QmlirError(
            f"'{args.artifact}' is not a generator: compile it with qmlir compile --generate"
        )
    ids = np.array(prompts, dtype=np.int64)
    streamer = _print_token if len(prompts) == 1 else None
    out = generator.generate(
        ids,
        args.max_new_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        eos_token_id=[] if args.ignore_eos else args.eos,
        streamer=streamer,
    )
    if streamer is not None:
        print(flush=True)
    else:
        for row in out[:, ids.shape[1] :]:
            print(" ".join(str(int(t)) for t in row))
    stats = generator.last_stats
    assert stats is not None
    decode = (
        f"decode {stats.new_tokens - 1} tokens in {1e3 * stats.decode_s:.1f} ms "
        f"({stats.decode_tokens_per_s:.1f} tokens/s per sequence)"
        if stats.new_tokens > 1
        else "no decode step"
    )
    print(
        f"prefill {stats.prompt_tokens} tokens x {len(prompts)} in {1e3 * stats.prefill_s:.1f} ms "
        f"({len(prompts) * stats.prefill_tokens_per_s:.1f} tokens/s); {decode}",
        file=sys.stderr,
    )
    return 0


def _ids(text: str) -> list[int]:
    try:
        ids = [int(t) for t in text.replace(" ", "").split(",") if t]
    except ValueError:
        raise QmlirError(f"--prompt-ids '{text}': give comma-separated token ids") from None
    if not ids:
        raise QmlirError("--prompt-ids is empty: give at least one token id")
    return ids


def _print_token(tokens: Any) -> None:
    print(int(tokens[0]), end=" ", flush=True)
