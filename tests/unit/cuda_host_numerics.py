"""ctypes wrapper of runtime_kernels/host/qmlir_numerics_host.cpp: the CUDA kernels' element math
(runtime_kernels/include/qmlir_numerics.cuh) built with the system C++ compiler, for tests."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

import runtime_kernels

PACKAGE = Path(runtime_kernels.__file__).resolve().parent
SOURCE = PACKAGE / "host" / "qmlir_numerics_host.cpp"
INCLUDE = PACKAGE / "include"

# IEEE float32 arithmetic as on the device: no FMA contraction, no fast-math.
CXX_FLAGS = ["-O2", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-fno-fast-math"]

_P = np.ctypeslib.ndpointer
_F32 = _P(dtype=np.float32, flags="C_CONTIGUOUS")
_U8 = _P(dtype=np.uint8, flags="C_CONTIGUOUS")
_U32 = _P(dtype=np.uint32, flags="C_CONTIGUOUS")
_I64, _INT, _FLOAT = ctypes.c_int64, ctypes.c_int, ctypes.c_float

SIGNATURES: dict[str, tuple[list[object], object]] = {
    "qmlir_host_encode": ([_F32, _U8, _I64, _INT], None),
    "qmlir_host_decode": ([_U8, _F32, _I64, _INT], None),
    "qmlir_host_e8m0_from_amax": ([_F32, _U8, _I64, _INT], None),
    "qmlir_host_e8m0_ceil": ([_F32, _U8, _I64], None),
    "qmlir_host_e8m0_values": ([_U8, _F32, _F32, _I64], None),
    "qmlir_host_fp8_scale": ([_F32, _F32, _I64, _FLOAT, _FLOAT, _INT], None),
    "qmlir_host_nvfp4_global_decode_scale": ([_FLOAT], _FLOAT),
    "qmlir_host_nvfp4_global_encode_scale": ([_FLOAT], _FLOAT),
    "qmlir_host_mx_offsets": ([ctypes.c_uint32, ctypes.c_uint32, _U32], None),
    "qmlir_host_block_offsets": ([ctypes.c_uint32, ctypes.c_uint32, _INT, _U32], None),
    "qmlir_host_mxfp8_rowwise": ([_F32, _I64, _I64, _INT, _U8, _U8], None),
    "qmlir_host_nvfp4": ([_F32, _I64, _I64, _U8, _U8], _FLOAT),
}

FORMATS = {"e4m3": 0, "e5m2": 1, "e2m1": 2}
RULES = {"ceil": 0, "floor": 1, "rne": 2, "even": 3}


def find_cxx() -> str | None:
    """$CXX, else c++ or g++ on PATH."""
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class HostNumerics:
    """The header's functions on numpy arrays."""

    def __init__(self, library: Path) -> None:
        self.lib = ctypes.CDLL(str(library))
        for name, (args, result) in SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = args, result

    @classmethod
    def build(cls, cxx: str, out_dir: Path) -> HostNumerics:
        library = out_dir / "libqmlir_numerics_host.so"
        cmd = [cxx, *CXX_FLAGS, f"-I{INCLUDE}", str(SOURCE), "-o", str(library)]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        return cls(library)

    def encode(self, v: np.ndarray, fmt: str) -> np.ndarray:
        x = np.ascontiguousarray(v, dtype=np.float32).ravel()
        out = np.empty(x.size, np.uint8)
        self.lib.qmlir_host_encode(x, out, x.size, FORMATS[fmt])
        return out.reshape(np.shape(v))

    def decode(self, codes: np.ndarray, fmt: str) -> np.ndarray:
        c = np.ascontiguousarray(codes, dtype=np.uint8).ravel()
        out = np.empty(c.size, np.float32)
        self.lib.qmlir_host_decode(c, out, c.size, FORMATS[fmt])
        return out

    def e8m0_from_amax(self, amax: np.ndarray, rule: str) -> np.ndarray:
        a = np.ascontiguousarray(amax, dtype=np.float32).ravel()
        out = np.empty(a.size, np.uint8)
        self.lib.qmlir_host_e8m0_from_amax(a, out, a.size, RULES[rule])
        return out

    def e8m0_ceil(self, v: np.ndarray) -> np.ndarray:
        a = np.ascontiguousarray(v, dtype=np.float32).ravel()
        out = np.empty(a.size, np.uint8)
        self.lib.qmlir_host_e8m0_ceil(a, out, a.size)
        return out

    def e8m0_values(self, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.ascontiguousarray(e, dtype=np.uint8).ravel()
        decoded, multiplier = np.empty(c.size, np.float32), np.empty(c.size, np.float32)
        self.lib.qmlir_host_e8m0_values(c, decoded, multiplier, c.size)
        return decoded, multiplier

    def fp8_scale(self, amax: np.ndarray, fp8_max: float, eps: float, pow2: bool) -> np.ndarray:
        a = np.ascontiguousarray(amax, dtype=np.float32).ravel()
        out = np.empty(a.size, np.float32)
        self.lib.qmlir_host_fp8_scale(a, out, a.size, fp8_max, eps, int(pow2))
        return out

    def nvfp4_global_scales(self, amax: float) -> tuple[np.float32, np.float32]:
        enc = self.lib.qmlir_host_nvfp4_global_encode_scale(amax)
        dec = self.lib.qmlir_host_nvfp4_global_decode_scale(amax)
        return np.float32(enc), np.float32(dec)

    def mx_offsets(self, rows: int, cols: int) -> np.ndarray:
        out = np.empty(rows * cols, np.uint32)
        self.lib.qmlir_host_mx_offsets(rows, cols, out)
        return out.reshape(rows, cols)

    def block_offsets(self, rows: int, cols: int, two_d: bool) -> np.ndarray:
        out = np.empty(rows * cols, np.uint32)
        self.lib.qmlir_host_block_offsets(rows, cols, int(two_d), out)
        return out.reshape(rows, cols)

    def mxfp8_rowwise(self, x: np.ndarray, rule: str) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=np.float32)
        rows, cols = x.shape
        codes = np.empty((rows, cols), np.uint8)
        scales = np.empty((rows, -(-cols // 32)), np.uint8)
        self.lib.qmlir_host_mxfp8_rowwise(x, rows, cols, RULES[rule], codes, scales)
        return codes, scales

    def nvfp4(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.float32]:
        x = np.ascontiguousarray(x, dtype=np.float32)
        rows, cols = x.shape
        blocks = -(-cols // 16)
        packed = np.empty((rows, blocks * 8), np.uint8)
        scales = np.empty((rows, blocks), np.uint8)
        s_dec = self.lib.qmlir_host_nvfp4(x, rows, cols, packed, scales)
        return packed, scales, np.float32(s_dec)
