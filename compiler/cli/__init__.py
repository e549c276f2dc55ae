"""``qmlir``: compile, run, quantize, report, recipes, inspect.

Errors are one line (``qmlir: error: ...``) with a non-zero exit; ``--debug`` shows tracebacks.
Each command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``.
Command modules import only numpy, the stdlib, ``compiler.runtime`` and ``passes.base`` at
their top, so ``qmlir run`` and ``qmlir inspect`` work with just the runtime installed.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from compiler.cli import compile as compile_cmd
from compiler.cli import inspect as inspect_cmd
from compiler.cli import quantize as quantize_cmd
from compiler.cli import recipes as recipes_cmd
from compiler.cli import report as report_cmd
from compiler.cli import run as run_cmd
from passes.base.errors import QmlirError

EXIT_ERROR = 1
EXIT_USAGE = 2

COMMANDS = (compile_cmd, run_cmd, quantize_cmd, report_cmd, recipes_cmd, inspect_cmd)
_BY_NAME = {command.NAME: command for command in COMMANDS}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"qmlir: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="qmlir", description="Compile PyTorch models to FP8 IREE modules.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in COMMANDS:
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _BY_NAME[args.command].run(args)
    except QmlirError as e:
        if args.debug:
            traceback.print_exc()
        print(f"qmlir: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("qmlir: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`qmlir run ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 (last resort: one line, details under --debug)
        if args.debug:
            traceback.print_exc()
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(
            f"qmlir: internal error: {type(e).__name__}: {first} (run with --debug for details)",
            file=sys.stderr,
        )
        return EXIT_ERROR
