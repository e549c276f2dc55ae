"""Max calibration of static activation scales: each ``nn.Linear``'s input amax over a set of
batches, run in torch (``compiler.calibrate``), as the recipe's decode scale: ``amax / 448`` for
fp8-current (compressed-tensors' and ModelOpt's FP8 ``input_scale``), ``amax / (448 * 6)`` for
nvfp4's global scale (ModelOpt's NVFP4 ``input_scale``; compressed-tensors stores its inverse as
``input_global_scale``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from passes.base.errors import QmlirError

FP8_MAX = 448.0
# what a static scale divides the amax by, per recipe that takes one
DIVISORS = {"fp8-current": np.float32(FP8_MAX), "nvfp4": np.float32(FP8_MAX * 6.0)}


def calibrate_linear_inputs(
    model: torch.nn.Module, batches: Any, recipe: str = "fp8-current"
) -> dict[str, float]:
    """``amax / divisor`` (f32; :data:`DIVISORS`) of every ``nn.Linear``'s input over
    ``batches``, by module path."""
    divisor = DIVISORS.get(recipe)
    if divisor is None:
        raise QmlirError(
            f"recipe '{recipe}' takes no static activation scale; calibrate for "
            f"{' or '.join(DIVISORS)}"
        )
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
        out[name] = float(a / divisor)
    return out
