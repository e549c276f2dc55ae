"""Max calibration of static activation scales: each ``nn.Linear``'s input amax over a set of
batches, run in torch (``compiler.calibrate``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from passes.base.errors import QmlirError

FP8_MAX = 448.0


def calibrate_linear_inputs(model: torch.nn.Module, batches: Any) -> dict[str, float]:
    """``amax / 448`` (f32) of every ``nn.Linear``'s input over ``batches``, by module path."""
    amax: dict[str, float] = {}

    def hook(name: str) -> Any:
        def record(module: torch.nn.Module, args: tuple[Any, ...]) -> None:
            x = args[0].detach().float().abs()
            x = torch.nan_to_num(x, nan=0.0, posinf=float("inf"))
            value = float(x.max()) if x.numel() else 0.0
            amax[name] = max(amax.get(name, 0.0), value)

        return record

    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        raise QmlirError("the model has no nn.Linear to calibrate")
    handles = [m.register_forward_pre_hook(hook(n)) for n, m in linears]
    was_training = model.training
    model.eval()
    count = 0
    try:
        with torch.no_grad():
            for batch in batches:
                args = batch if isinstance(batch, (tuple, list)) else (batch,)
                model(*[torch.as_tensor(a) for a in args])
                count += 1
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    if not count:
        raise QmlirError("calibrate() needs at least one batch")
    out = {}
    for name, value in amax.items():
        if not np.isfinite(value):
            raise QmlirError(f"layer '{name}' saw an infinite input: no finite static scale")
        a = np.float32(value) if value > 0 else np.float32(1)  # all zeros: any scale will do
        out[name] = float(a / np.float32(FP8_MAX))
    return out
