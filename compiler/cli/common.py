"""What several commands share: option parsing, tables, sizes, .npy/.npz files."""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from compiler.runtime.input_check import arrays_by_name
from compiler.runtime.tensor_files import npz_arrays
from passes.base.errors import QmlirError
from passes.base.files import write_atomically


def parse_options(items: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise QmlirError(f"recipe option '{item}' is not KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def parse_layer_recipe_names(items: list[str]) -> dict[str, str]:
    """``--layer-recipe GLOB=RECIPE`` flags: recipe names by glob, in order."""
    pairs = {}
    for item in items:
        glob, sep, name = item.rpartition("=")
        if not sep or not glob or not name:
            raise QmlirError(f"--layer-recipe '{item}' is not GLOB=RECIPE")
        pairs[glob] = name
    return pairs


def parse_layer_recipes(items: list[str]) -> tuple[tuple[str, Any], ...]:
    # recipes need iree.compiler (the compile extra); run/inspect import this module and must not
    from passes.recipes import get_recipe

    return tuple((glob, get_recipe(name)) for glob, name in parse_layer_recipe_names(items).items())


def print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for n, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def print_layers(layers: list[dict[str, str]]) -> None:
    """Each matmul: its layer (a training step's: and which GEMM), its recipe (none: high
    precision), and why."""
    rows: list[tuple[str, ...]] = [("layer", "recipe", "why")]
    for entry in layers:
        name = entry["layer"] or "(top level)"
        if entry.get("gemm"):
            name += f" ({entry['gemm']})"
        rows.append((name, entry["recipe"], entry["note"]))
    print_table(rows)


def human_size(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1e6:.2f} MB"
    return f"{n / 1e3:.1f} kB" if n >= 1000 else f"{n} B"


def read_json(path: str, what: str) -> Any:
    """The JSON in ``path``; one line naming ``what`` it should hold when it cannot be read."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise QmlirError(f"cannot read {what} '{path}': {e}") from None


def load_arrays(path: Path, what: str) -> Any:
    """``np.load`` with one-line errors (a .npy gives an array, a .npz a mapping)."""
    if not path.is_file():
        raise QmlirError(f"{what} '{path}' does not exist")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e):  # no array header: numpy would try it as a pickle
            raise QmlirError(
                f"{what} '{path}' is not a numpy .npy or .npz file (qmlir reads no pickled data)"
            ) from e
        raise QmlirError(f"cannot read {what} '{path}': {e}") from e
    except Exception as e:
        raise QmlirError(f"cannot read {what} '{path}': {e}") from e


def read_inputs(path: Path, specs: list[dict[str, Any]]) -> list[np.ndarray]:
    """A ``.npy`` (a module of one input) or a ``.npz`` whose keys name the inputs."""
    loaded = load_arrays(path, "inputs file")
    if isinstance(loaded, np.ndarray):
        if len(specs) != 1:
            raise QmlirError(
                f"'{path}' holds one array, the module takes {len(specs)}: give a .npz keyed by "
                "input name"
            )
        return [loaded]
    with loaded:
        return arrays_by_name(npz_arrays(loaded, path), specs, f"'{path}'")


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **{k: _plain(v) for k, v in arrays.items()})
    write_atomically(path, buffer.getvalue())


def _plain(x: np.ndarray) -> np.ndarray:
    """bf16 arrays (ml_dtypes) are stored as float32 so any numpy can read them."""
    return x.astype(np.float32) if x.dtype.kind == "V" else x


def check_output(output: Path) -> None:
    """Refuses an output the compile could not write, before compiling: a directory, or a place
    where its directory is not one, cannot be created or cannot be written. The directory is
    created only when the artifact is saved; the check writes (and removes) a probe file in
    the nearest existing one."""
    if output.is_dir():
        raise QmlirError(f"output '{output}' is a directory")
    existing = output.absolute().parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise QmlirError(f"cannot write '{output}': '{existing}' is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".qmlir-probe-", dir=existing)
    except OSError as e:
        raise QmlirError(f"cannot write '{output}': {e.strerror or e} in '{existing}'") from e
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def bytes_printer(quiet: bool) -> Any:
    """The parameter file's progress on a terminal: one line, rewritten at each percent."""
    if quiet or not sys.stderr.isatty():
        return None
    shown = [-1]

    def report(done: int, total: int, name: str) -> None:
        percent = 100 * done // max(total, 1)
        if percent != shown[0]:
            shown[0] = percent
            end = "\n" if done >= total else ""
            print(
                f"\r  weights {percent:3d}% ({human_size(done)} of {human_size(total)})",
                end=end,
                file=sys.stderr,
                flush=True,
            )

    return report
