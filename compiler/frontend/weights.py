"""Reading a model's weights one tensor at a time, by state-dict name, as numpy arrays (bf16 as
``ml_dtypes.bfloat16``): from tensors in memory, or from a checkpoint's safetensors shards
(mapped, so a read costs only the pages of that tensor)."""

from __future__ import annotations

from collections.abc import Mapping

import ml_dtypes
import numpy as np
import torch

from passes.base.errors import QmlirError
from passes.ir.parameters import Reader


def tensor_numpy(t: torch.Tensor) -> np.ndarray:
    """``t`` as numpy without a copy where it can be (bf16 viewed as ``ml_dtypes.bfloat16``)."""
    t = t.detach()
    if t.is_meta:
        raise QmlirError("a weight on the meta device has no values")
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def numpy_tensor(array: np.ndarray) -> torch.Tensor:
    """A torch tensor holding a copy of ``array`` (``ml_dtypes.bfloat16`` as bf16)."""
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(np.array(array).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(array))


def tensor_reader(tensors: Mapping[str, torch.Tensor]) -> Reader:
    """A reader of in-memory ``tensors`` (an exported program's state)."""

    def read(name: str) -> np.ndarray:
        if name not in tensors:
            raise QmlirError(f"the model has no tensor '{name}'")
        return tensor_numpy(tensors[name])

    return read


class _Chained:
    """``first``, else ``fallback``'s tensor; ``advise`` goes to ``first`` where it has one."""

    def __init__(self, first: Reader, fallback: Mapping[str, torch.Tensor]) -> None:
        self._first = first
        self._fallback = fallback

    def _own(self, name: str) -> bool:
        return name in self._fallback and not self._fallback[name].is_meta

    def __call__(self, name: str) -> np.ndarray:
        if self._own(name):
            return tensor_numpy(self._fallback[name])
        return self._first(name)

    def advise(self, name: str) -> None:
        advise = getattr(self._first, "advise", None)
        if advise is not None and not self._own(name):
            advise(name)


def chain_readers(first: Reader, fallback: Mapping[str, torch.Tensor]) -> Reader:
    """``first``, else ``fallback``'s tensor (a checkpoint, then the buffers a model computes
    itself, such as rotary frequencies)."""
    return _Chained(first, fallback)
