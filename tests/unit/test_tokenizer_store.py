"""A generator's stored tokenizer (``compiler/runtime/tokenizer_store.py``): a folder's files or a
tokenizer object packed into the metadata and read back by transformers to the same tokenizer;
what is not a tokenizer is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.runtime.tokenizer_store import pack_folder, pack_tokenizer, unpack_tokenizer
from passes.base.errors import QmlirError
from tests.e2e import checkpoints


def test_a_tokenizer_round_trips(tmp_path: Path) -> None:
    tokenizer = checkpoints.byte_tokenizer()
    tokenizer.save_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")  # not a tokenizer file: not stored
    packed = pack_folder(tmp_path)
    assert packed is not None and "tokenizer.json" in packed and "config.json" not in packed
    assert pack_tokenizer(tokenizer).keys() == packed.keys() == pack_tokenizer(tmp_path).keys()
    back = unpack_tokenizer(packed)
    text = "qmlir ü 🙂"
    assert back(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert back.decode(tokenizer(text)["input_ids"]) == text


def test_what_is_not_a_tokenizer_is_one_line(tmp_path: Path) -> None:
    assert pack_folder(tmp_path) is None
    (tmp_path / "tokenizer_config.json").write_text("{}")
    assert pack_folder(tmp_path) is None  # a config alone is no tokenizer
    with pytest.raises(QmlirError, match="holds no tokenizer files"):
        pack_tokenizer(tmp_path)
    with pytest.raises(QmlirError, match="not a folder"):
        pack_tokenizer(tmp_path / "missing")
    with pytest.raises(QmlirError, match="not int"):
        pack_tokenizer(3)
    with pytest.raises(QmlirError, match="unexpected file"):
        unpack_tokenizer({"evil.py": ""})
    with pytest.raises(QmlirError, match="damaged"):
        unpack_tokenizer({"tokenizer.json": "not base64 zlib"})
