"""The passes' two listings, ``passes/__init__.py``'s docstring and the README's "How it works",
name every registered pass, once each, in the same order, and no other."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import passes
from passes.base.module_pass import PASSES

ROOT = Path(__file__).resolve().parents[2]


def _registered() -> list[str]:
    """Every pass the modules at the top of passes/ register."""
    for path in sorted((ROOT / "passes").glob("*.py")):
        if path.stem not in ("__init__", "__main__"):
            importlib.import_module(f"passes.{path.stem}")
    return sorted(PASSES)


def _listed(text: str, quote: str) -> list[str]:
    """The pass names that begin a list item (``- `name` ...``), in order."""
    q = re.escape(quote)
    return re.findall(rf"^- {q}([a-z][a-z0-9-]*){q}", text, flags=re.MULTILINE)


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_package_docstring_lists_every_pass() -> None:
    listed = _listed(passes.__doc__ or "", "``")
    assert sorted(listed) == _registered()


def test_the_readme_lists_every_pass() -> None:
    listed = _listed(_readme_section("How it works"), "`")
    assert sorted(listed) == _registered()


def test_both_list_them_in_the_same_order() -> None:
    assert _listed(passes.__doc__ or "", "``") == _listed(_readme_section("How it works"), "`")


def test_a_missing_pass_would_be_found() -> None:
    text = "- `fold-weight-views` (inference): ...\n  `quantize-matmuls` in a sentence\n"
    assert _listed(text, "`") == ["fold-weight-views"]
    assert _listed("- ``lower-named-ops`` (always): ...", "``") == ["lower-named-ops"]
