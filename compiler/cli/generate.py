"""``qmlir generate``: run a generator artifact (``qmlir compile --generate``) on a prompt.

Needs only the runtime. The prompt is text (``--prompt "..."``, tokenized by the tokenizer
stored in the artifact; transformers reads it) or token ids (``--prompt-ids 1,2,3``); repeat
the flag for a batch of prompts of one length in tokens. With one prompt, the new text (or each
new token id) is printed as it is produced; with several, each sequence's on a line at the end.
Then the prefill's and the decode's tokens per second.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from compiler.runtime import Generator, load
from passes.base.errors import QmlirError

NAME = "generate"
CALLS_ARTIFACTS = True  # the command keeps freed memory for reuse (compiler/cli/__init__.py)
HELP = "generate tokens with a generator artifact (qmlir compile --generate)"


def add_arguments(g: argparse.ArgumentParser) -> None:
    g.add_argument("artifact", help="a generator written by qmlir compile --generate")
    prompt = g.add_mutually_exclusive_group(required=True)
    prompt.add_argument(
        "--prompt",
        action="append",
        metavar="TEXT",
        help="the prompt as text, tokenized by the artifact's stored tokenizer (repeat for a "
        "batch; equal lengths in tokens)",
    )
    prompt.add_argument(
        "--prompt-ids",
        action="append",
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
    if args.prompt_ids is not None:
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
    if args.prompt is not None:
        if not generator.has_tokenizer:
            raise QmlirError(
                f"'{args.artifact}' stores no tokenizer: give --prompt-ids, or compile it with "
                "qmlir compile --generate --tokenizer DIR"
            )
        ids = generator.encode(args.prompt)
    else:
        ids = np.array(prompts, dtype=np.int64)
    text = args.prompt is not None
    streamer: Any = None
    if ids.shape[0] == 1:
        streamer = _TextPrinter(generator.tokenizer) if text else _print_token
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
            if text:
                print(generator.tokenizer.decode(row, skip_special_tokens=True))
            else:
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
        f"prefill {stats.prompt_tokens} tokens x {ids.shape[0]} in {1e3 * stats.prefill_s:.1f} ms "
        f"({ids.shape[0] * stats.prefill_tokens_per_s:.1f} tokens/s); {decode}",
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


class _TextPrinter:
    """Prints one sequence's new text as it grows: the whole continuation is decoded after each
    token and what was not printed yet goes out (a character split over tokens waits for its
    last byte)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.printed = ""

    def __call__(self, tokens: Any) -> None:
        self.ids.append(int(tokens[0]))
        text = self.tokenizer.decode(self.ids, skip_special_tokens=True)
        if text.endswith("\ufffd"):
            return
        if text.startswith(self.printed):
            print(text[len(self.printed) :], end="", flush=True)
        self.printed = text
