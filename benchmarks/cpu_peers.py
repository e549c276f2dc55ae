"""The CPU runtimes a user would pick instead of qmlir, for ``benchmarks/cpu.py``: ONNX Runtime
and OpenVINO, each on the model exported to ONNX from the same ``nn.Module`` with the same
example inputs (``torch.onnx.export``, the dynamo exporter, static shapes), on every core.

- ONNX Runtime f32 (``CPUExecutionProvider``), and its CPU low-precision path: dynamic int8
  quantization of the MatMul/Gemm weights (``onnxruntime.quantization.quantize_dynamic``,
  ``QInt8`` weights, activations quantized per call to uint8); ONNX Runtime has no FP8 or FP4
  kernels on a CPU.
- OpenVINO f32 and, on a host with bf16 arithmetic, bf16 (``INFERENCE_PRECISION_HINT``), reading
  the same ONNX file.

Needs the ``bench`` extra (``pip install -e '.[bench]'``, which ``make bench`` installs); without
it :func:`peer_calls` returns nothing and says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def first_output(output: Any) -> np.ndarray:
    """A runtime's first output as a numpy array."""
    while isinstance(output, (list, tuple)):
        output = output[0]
    if isinstance(output, dict):
        return first_output(next(iter(output.values())))
    if hasattr(output, "detach"):
        return output.detach().float().numpy()
    return np.asarray(output)


def export_onnx(model: Any, inputs: Sequence[Any], names: list[str], path: Path) -> Path:
    import torch

    with torch.no_grad():
        torch.onnx.export(
            model, tuple(inputs), str(path), input_names=names, dynamo=True, external_data=False
        )
    return path


def peer_calls(
    model: Any, inputs: Sequence[Any], names: list[str], tmp: Path, bf16: bool
) -> dict[str, Callable[[], np.ndarray]]:
    """Each peer's call on ``inputs`` (returning its first output), by row label."""
    try:
        import onnxruntime as ort
        import openvino as ov
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        print(f"(no ONNX Runtime / OpenVINO rows: {e}; pip install -e '.[bench]')")
        return {}
    threads = os.cpu_count() or 1
    onnx_path = export_onnx(model, inputs, names, tmp / "model.onnx")
    int8_path = tmp / "model.int8.onnx"
    quantize_dynamic(str(onnx_path), str(int8_path), weight_type=QuantType.QInt8)
    feed = {n: x.numpy() for n, x in zip(names, inputs, strict=True)}
    calls: dict[str, Callable[[], np.ndarray]] = {}
    for label, path in (("ONNX Runtime f32", onnx_path), ("ONNX Runtime int8", int8_path)):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}  # unused inputs are dropped
        own = {k: v for k, v in feed.items() if k in wanted}
        calls[label] = lambda s=session, f=own: first_output(s.run(None, f))
    core = ov.Core()
    for precision in ("f32", "bf16") if bf16 else ("f32",):
        compiled = core.compile_model(
            str(onnx_path),
            "CPU",
            {"INFERENCE_PRECISION_HINT": precision, "INFERENCE_NUM_THREADS": threads},
        )
        request = compiled.create_infer_request()
        wanted = {i.get_any_name() for i in compiled.inputs}
        own = {k: v for k, v in feed.items() if k in wanted}

        def infer(r: Any = request, f: dict[str, np.ndarray] = own) -> np.ndarray:
            r.infer(f)
            return np.asarray(r.get_output_tensor(0).data)

        calls[f"OpenVINO {precision}"] = infer
    return calls
