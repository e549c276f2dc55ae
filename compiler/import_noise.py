"""Two known log lines that every transformers model's first build prints, dropped by exact
match (issue 30, item 7): torchao's "Failed to load .../torchao/_C_*.so" (its optional CUDA
kernels, absent on a CPU install; transformers imports torchao to check for quantizers) and
torch's "<enum ...> is an Enum subclass and is now natively supported ... register_constant()
... deprecated" (torchao registering its enums). Any other record of those loggers, and every
other logger, is untouched."""

from __future__ import annotations

import logging

_TORCHAO = "torchao"
_PYTREE = "torch.utils._pytree"


class _KnownNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name == _TORCHAO:
            return not (message.startswith("Failed to load ") and ".so" in message)
        if record.name == _PYTREE:
            return "is an Enum subclass and is now natively supported" not in message
        return True


_FILTER = _KnownNoise()


def quiet_known_import_noise() -> None:
    """Installs the filter on the two loggers (idempotent)."""
    for name in (_TORCHAO, _PYTREE):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
