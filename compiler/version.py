"""qmlir's version and the IREE version it compiles with."""

from importlib import metadata


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


__version__ = _version("qmlir")
IREE_VERSION = _version("iree-base-compiler")
