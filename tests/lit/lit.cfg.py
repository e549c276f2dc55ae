# lit configuration: `lit tests/lit` runs every .mlir here through `python -m passes` and
# pip's `filecheck`.
import os
import sys

import lit.formats

config.name = "qmlir"  # noqa: F821 (lit injects `config`)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["Output", "inputs"]  # noqa: F821

_root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_bin = os.path.dirname(sys.executable)
config.environment["PYTHONPATH"] = _root  # noqa: F821
config.environment["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
config.substitutions.append(("%qmlir-opt", f"{sys.executable} -m passes"))  # noqa: F821
config.substitutions.append(("FileCheck", os.path.join(_bin, "filecheck")))  # noqa: F821


def _nvrtc_available() -> bool:
    """``REQUIRES: nvrtc`` tests (the cuda lowering builds PTX) need the ``cuda`` extra."""
    sys.path.insert(0, _root)
    try:
        from runtime_kernels import nvrtc

        return nvrtc.available()
    except Exception:
        return False


if _nvrtc_available():
    config.available_features.add("nvrtc")  # noqa: F821


def _iree_compile_dynamic_cpu() -> str:
    """``iree-compile`` with qmlir's flags for a dynamic llvm-cpu artifact (x86-64-v3: the same
    code on every x86 host that runs the tests)."""
    sys.path.insert(0, _root)
    from passes.host.flags import artifact_cpu_flags

    flags = artifact_cpu_flags("x86-64-v3", dynamic=True)
    return " ".join([os.path.join(_bin, "iree-compile"), "--iree-input-type=torch", *flags])


def _iree_compile_cpu() -> str:
    """``iree-compile`` with qmlir's flags for a static llvm-cpu artifact (x86-64-v3)."""
    sys.path.insert(0, _root)
    from passes.host.flags import artifact_cpu_flags

    flags = artifact_cpu_flags("x86-64-v3")
    return " ".join([os.path.join(_bin, "iree-compile"), "--iree-input-type=torch", *flags])


# the longer name first: lit replaces substrings in order
config.substitutions.append(("%iree-compile-dynamic-cpu", _iree_compile_dynamic_cpu()))  # noqa: F821
config.substitutions.append(("%iree-compile-cpu", _iree_compile_cpu()))  # noqa: F821
