"""sha256 of every sample x recipe artifact, to check that a change leaves them byte-identical.

    PYTHONPATH=. .venv/bin/python benchmarks/artifact_digests.py > after.txt   # in each checkout
    diff before.txt after.txt

Compiles each sample model with each recipe for llvm-cpu (and the MLP and transformer block for
cuda on every architecture, and a few option and per-layer variants) through ``qmlir compile``,
and prints one ``digest  name`` line each. IREE's own output is not fully deterministic: the
reserved words of each embedded ELF's dispatch tables (``.data.rel.ro``) vary from one compile
to the next, and so do the zip CRC over that ELF and the seal's SHA-256 over it all;
:func:`normalize` zeroes these before hashing (everything that executes, the code, constants and
metadata, is hashed as it is).
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import sys
import tempfile
from pathlib import Path

from compiler.cli import main as qmlir

RECIPES = ("none", "fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "mxfp4", "nvfp4")
CUDA_RECIPES = ("fp8-current", "fp8-delayed", "fp8-block", "mxfp8", "nvfp4")  # mxfp4: llvm-cpu
SAMPLES = (
    "mlp.py:build",
    "mlp.py:build_bf16",
    "transformer_block.py:build",
    "transformer_block.py:build_bf16",
    "decoder_lm.py:build",
    "minilm.py:build",
)
CUDA_SAMPLES = ("mlp.py:build", "transformer_block.py:build")
VARIANTS = (
    ("nvfp4", ("-O", "scale_order=torchao")),
    ("mxfp8", ("-O", "e8m0_rounding=floor")),
    ("mxfp8", ("-O", "e8m0_rounding=rne")),
    ("mxfp8", ("-O", "e8m0_rounding=even")),
    ("mxfp4", ("-O", "e8m0_rounding=even")),
    ("fp8-current", ("-O", "force_pow2_scales=true")),
    ("fp8-delayed", ("-O", "amax_compute_algo=most_recent", "-O", "margin=2")),
    ("fp8-block", ("--exclude", "attn.*", "--layer-recipe", "mlp.fc2=nvfp4")),
    *((r, ("--quantize-all-matmuls",)) for r in ("fp8-current", "fp8-block", "mxfp8", "nvfp4")),
)


def jobs() -> list[tuple[str, str, tuple[str, ...]]]:
    out = [(s, r, ()) for s in SAMPLES for r in RECIPES]
    for arch in ("sm_89", "sm_90", "sm_100"):
        cuda = ("--target", "cuda", "--cuda-arch", arch)
        out += [(s, r, cuda) for s in CUDA_SAMPLES for r in CUDA_RECIPES]
    out += [("transformer_block.py:build", r, flags) for r, flags in VARIANTS]
    return out


SEAL_MAGIC = b"\nqmlir-sealed-1\n"  # compiler/runtime/seal.py: ... | SHA-256 | MAGIC
SEAL_DIGEST = 32


def normalize(data: bytes) -> bytes:
    """``data`` with each embedded ELF's ``.data.rel.ro``, every zip CRC and the seal's SHA-256
    zeroed (the seal hashes the bytes zeroed here, so it varies with them; everything it covers
    is hashed as it is)."""
    b = bytearray(data)
    if data.endswith(SEAL_MAGIC):
        end = len(b) - len(SEAL_MAGIC)
        b[end - SEAL_DIGEST : end] = bytes(SEAL_DIGEST)
    start = 0
    while (elf := b.find(b"\x7fELF\x02\x01", start)) >= 0:
        _zero_section(b, elf, b".data.rel.ro")
        start = elf + 4
    for signature, crc in ((b"PK\x03\x04", 14), (b"PK\x01\x02", 16)):
        start = 0
        while (at := b.find(signature, start)) >= 0:
            b[at + crc : at + crc + 4] = bytes(4)
            start = at + 4
    return bytes(b)


def _zero_section(b: bytearray, elf: int, wanted: bytes) -> None:
    """Zeroes the section ``wanted`` of the ELF64 image starting at ``elf`` in ``b``."""
    (shoff,) = struct.unpack_from("<Q", b, elf + 0x28)
    entsize, count, names = struct.unpack_from("<HHH", b, elf + 0x3A)
    headers = [
        struct.unpack_from("<IIQQQQIIQQ", b, elf + shoff + k * entsize) for k in range(count)
    ]
    strtab = headers[names][4]
    for name, _, _, _, offset, size, *_ in headers:
        at = elf + strtab + name
        if bytes(b[at : b.index(b"\0", at)]) == wanted:
            b[elf + offset : elf + offset + size] = bytes(size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the jobs whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for sample, recipe, flags in jobs():
            name = " ".join([sample, recipe, *flags])
            if args.only not in name:
                continue
            out = Path(tmp) / "a.vmfb"
            code = qmlir(
                ["compile", f"samples/{sample}", "--recipe", recipe, *flags, "-o", str(out), "-q"]
            )
            digest = (
                hashlib.sha256(normalize(out.read_bytes())).hexdigest() if code == 0 else "FAILED"
            )
            print(f"{digest}  {name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
