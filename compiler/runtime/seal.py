"""The artifact file: IREE's ``.vmfb`` followed by qmlir's metadata and a SHA-256 seal.

Layout (all of it one file; IREE reads the module from the front and ignores what follows it)::

    vmfb | metadata (UTF-8 JSON) | vmfb length, metadata length (two u64 LE) | SHA-256 | MAGIC

The digest covers every byte before it: the module's code and constants, the metadata and the
two lengths. :func:`unseal` checks it before any byte is handed to IREE, so a flipped bit, a
truncation or an edit is one error line instead of a crash or a silently different answer.

The digest detects corruption, not forgery: anyone who can write the file can recompute it. A
``.vmfb`` is native code; run artifacts only from sources you trust (``docs/cli.md``).

Reading needs only the standard library: ``qmlir inspect`` reads the metadata from here without
loading (let alone running) anything of the module.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

from compiler.runtime.metadata import ArtifactMetadata
from passes.base.errors import QmlirError

MAGIC = b"\nqmlir-sealed-1\n"
_LENGTHS = struct.Struct("<QQ")
_DIGEST = 32
_TRAILER = _LENGTHS.size + _DIGEST + len(MAGIC)


@dataclass(frozen=True)
class Artifact:
    """A verified artifact: the IREE module's bytes, its metadata, and the whole file."""

    vmfb: bytes
    record: ArtifactMetadata
    data: bytes

    @property
    def metadata(self) -> dict[str, Any]:
        """The record's JSON form, as sealed."""
        return self.record.to_json()

    @property
    def digest(self) -> str:
        return self.data[-_DIGEST - len(MAGIC) : -len(MAGIC)].hex()


def seal(vmfb: bytes, metadata: ArtifactMetadata | dict[str, Any]) -> bytes:
    """The artifact file for ``vmfb`` and ``metadata`` (a record, or its JSON form)."""
    if isinstance(metadata, ArtifactMetadata):
        metadata = metadata.to_json()
    text = json.dumps(metadata, sort_keys=True).encode()
    body = b"".join((vmfb, text, _LENGTHS.pack(len(vmfb), len(text))))
    return body + hashlib.sha256(body).digest() + MAGIC


def unseal(data: bytes) -> Artifact:
    """The verified artifact in ``data``; a one-line :class:`QmlirError` if anything is off."""
    if not data.endswith(MAGIC):
        raise QmlirError(
            "not a qmlir artifact, or a damaged one: it does not end with qmlir's seal "
            "(truncated, edited, or not written by qmlir compile)"
        )
    if len(data) < _TRAILER:
        raise QmlirError("a damaged qmlir artifact: too short to hold its seal")
    body_end = len(data) - _DIGEST - len(MAGIC)
    vmfb_len, meta_len = _LENGTHS.unpack_from(data, body_end - _LENGTHS.size)
    if vmfb_len + meta_len + _TRAILER != len(data):
        raise QmlirError(
            f"a damaged qmlir artifact: its seal describes {vmfb_len + meta_len + _TRAILER} "
            f"bytes, the file has {len(data)}"
        )
    if hashlib.sha256(data[:body_end]).digest() != data[body_end : body_end + _DIGEST]:
        raise QmlirError(
            "a damaged qmlir artifact: its SHA-256 digest does not match its contents "
            "(corrupted or modified after qmlir compile wrote it)"
        )
    text = data[vmfb_len : vmfb_len + meta_len]
    try:
        metadata = json.loads(text.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise QmlirError(f"a qmlir artifact with unreadable metadata: {e}") from None
    return Artifact(data[:vmfb_len], ArtifactMetadata.from_json(metadata), data)
