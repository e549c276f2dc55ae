"""``qmlir``: compile, train, run, generate, quantize, export, calibrate, report,
recipes, inspect.

Errors are one line (``qmlir: error: ...``) with a non-zero exit; ``--debug`` shows tracebacks.
Each command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``,
and ``NEEDS`` (the modules of the compile extra it imports) where it needs any; a command that
calls artifacts (``CALLS_ARTIFACTS``) first makes its process keep freed memory for reuse
(``compiler.runtime.host_memory``: each call reuses its buffers' pages). Command modules
import only numpy, the stdlib, ``compiler.runtime``, ``compiler.extras`` and ``passes.base`` at
their top, so ``qmlir run``, ``train`` and ``inspect`` work with just the runtime installed;
in such an install a command with ``NEEDS`` says ``qmlir: error: qmlir compile needs the compile
extra (missing ...): pip install 'qmlir[compile]'`` and exits 2, before it imports anything.

Ctrl-C (SIGINT) and SIGTERM stop a command the same way: an exception in the main thread, so
every ``finally`` runs (temporary directories are removed, an ``iree-compile`` child is killed)
and no partial output is left; then one line, ``qmlir: interrupted`` (exit 130) or
``qmlir: terminated`` (exit 143). The command modules are imported inside :func:`main`, so a
Ctrl-C while they load is reported the same way, not as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from types import FrameType, ModuleType
from typing import Any

from compiler.extras import MissingExtra, from_import_error, require
from passes.base.errors import QmlirError

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_MISSING_EXTRA = 2  # as for a malformed command line: this install cannot run the command
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_TERMINATED = 143  # 128 + SIGTERM

COMMAND_MODULES = (
    "compile",
    "train",
    "run",
    "generate",
    "quantize",
    "export",
    "calibrate",
    "search",
    "report",
    "recipes",
    "inspect",
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's ``KeyboardInterrupt`` (a subclass, so
    code that cleans up on an interrupt, ``subprocess.run`` included, does so on SIGTERM too)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"qmlir: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def commands() -> tuple[ModuleType, ...]:
    """The command modules, in ``qmlir --help`` order."""
    return tuple(importlib.import_module(f"compiler.cli.{name}") for name in COMMAND_MODULES)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="qmlir", description="Compile PyTorch models to FP8 IREE modules.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for command in commands():
        command.add_arguments(sub.add_parser(command.NAME, help=command.HELP))
    return parser


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # a second SIGTERM must not interrupt the cleanup the first one started (SIGKILL still does)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous: Any = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    try:
        return _main(argv)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    debug = False
    feature = "qmlir"
    try:
        args = build_parser().parse_args(argv)
        debug = args.debug
        feature = f"qmlir {args.command}"
        command = {command.NAME: command for command in commands()}[args.command]
        require(feature, getattr(command, "NEEDS", ()))
        if getattr(command, "CALLS_ARTIFACTS", False):
            from compiler.runtime.host_memory import retain_for_cpu_calls

            retain_for_cpu_calls()
        return int(command.run(args))
    except MissingExtra as e:
        return _missing_extra(e, debug)
    except QmlirError as e:
        if debug:
            traceback.print_exc()
        print(f"qmlir: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except Terminated:
        print("qmlir: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("qmlir: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`qmlir run ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ImportError as e:  # a module of the compile extra that no NEEDS named
        missing = from_import_error(feature, e)
        if missing is None:
            return _internal_error(e, debug)
        return _missing_extra(missing, debug)
    except Exception as e:  # noqa: BLE001 (last resort: one line, details under --debug)
        return _internal_error(e, debug)


def _missing_extra(e: MissingExtra, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(f"qmlir: error: {e}", file=sys.stderr)
    return EXIT_MISSING_EXTRA


def _internal_error(e: Exception, debug: bool) -> int:
    """The last resort: one line, details under ``--debug``."""
    if debug:
        traceback.print_exc()
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    print(
        f"qmlir: internal error: {type(e).__name__}: {first} (run with --debug for details)",
        file=sys.stderr,
    )
    return EXIT_ERROR
