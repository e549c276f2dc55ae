"""A generator's tokenizer, stored in its artifact: the checkpoint folder's tokenizer files,
each zlib-compressed and base64-encoded in the sealed metadata (``Generation.tokenizer``), so
that ``qmlir generate ART --prompt "text"`` needs nothing but the artifact.

Which files: the ones ``transformers.AutoTokenizer.from_pretrained`` reads for the common
tokenizers (fast ``tokenizer.json``, SentencePiece ``tokenizer.model``, BPE ``vocab.json`` and
``merges.txt``, WordPiece ``vocab.txt``, their configs and chat templates). Reading them back
needs transformers (the ``tokenizer`` property imports it on first use).
"""

from __future__ import annotations

import base64
import tempfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passes.base.errors import QmlirError

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "tokenizer.model",
    "vocab.json",
    "merges.txt",
    "vocab.txt",
    "chat_template.jinja",
    "chat_template.json",
)
# a tokenizer larger than this (all files, uncompressed) is refused: no real one comes close
MAX_TOKENIZER_BYTES = 64 << 20


def pack_folder(folder: Path) -> dict[str, str] | None:
    """The tokenizer files of ``folder`` packed for the metadata; ``None`` when it has none of
    the files that make a tokenizer (a ``tokenizer_config.json`` alone does not)."""
    found = {name: folder / name for name in TOKENIZER_FILES if (folder / name).is_file()}
    if not set(found) - {"tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"}:
        return None
    total = sum(p.stat().st_size for p in found.values())
    if total > MAX_TOKENIZER_BYTES:
        raise QmlirError(
            f"the tokenizer files of '{folder}' hold {total / 2**20:.0f} MiB, more than the "
            f"{MAX_TOKENIZER_BYTES >> 20} MiB an artifact stores"
        )
    return {
        name: base64.b64encode(zlib.compress(path.read_bytes(), 9)).decode("ascii")
        for name, path in found.items()
    }


def pack_tokenizer(tokenizer: Any) -> dict[str, str]:
    """A transformers tokenizer (anything with ``save_pretrained``) or a folder, packed."""
    if isinstance(tokenizer, (str, Path)):
        folder = Path(tokenizer)
        if not folder.is_dir():
            raise QmlirError(f"tokenizer '{tokenizer}' is not a folder")
        packed = pack_folder(folder)
        if packed is None:
            raise QmlirError(f"'{folder}' holds no tokenizer files ({', '.join(TOKENIZER_FILES)})")
        return packed
    if not hasattr(tokenizer, "save_pretrained"):
        kind = type(tokenizer).__name__
        raise QmlirError(f"tokenizer: give a transformers tokenizer or its folder, not {kind}")
    with tempfile.TemporaryDirectory(prefix="qmlir-tokenizer-") as tmp:
        tokenizer.save_pretrained(tmp)
        packed = pack_folder(Path(tmp))
    if packed is None:
        raise QmlirError(f"{type(tokenizer).__name__}.save_pretrained wrote no tokenizer files")
    return packed


def unpack_tokenizer(files: Mapping[str, str]) -> Any:
    """The transformers tokenizer of packed ``files``."""
    try:
        from transformers import AutoTokenizer
    except ImportError:  # pragma: no cover - transformers is a dependency of qmlir
        raise QmlirError("reading the stored tokenizer needs transformers") from None
    with tempfile.TemporaryDirectory(prefix="qmlir-tokenizer-") as tmp:
        for name, data in files.items():
            if name not in TOKENIZER_FILES:
                raise QmlirError(f"the artifact's tokenizer has an unexpected file '{name}'")
            try:
                (Path(tmp) / name).write_bytes(zlib.decompress(base64.b64decode(data)))
            except (ValueError, zlib.error):
                raise QmlirError(f"the artifact's tokenizer file '{name}' is damaged") from None
        try:
            return AutoTokenizer.from_pretrained(tmp)
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise QmlirError(f"the artifact's tokenizer does not load: {first}") from None
