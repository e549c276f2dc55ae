"""An artifact's one-line summary from its record: the recipe, how many of the model's matmuls
it quantized, and what stayed in high precision (matmuls kept, with why; convolutions, which
the recipes do not quantize). ``qmlir compile`` prints it, ``compiler.compile`` logs it, and
``CompiledModule.summary`` returns it."""

from __future__ import annotations

from collections import Counter

from compiler.runtime.metadata import ArtifactMetadata

NOT_QUANTIZED = "none"  # a kept matmul's recipe in the layer table (describe.py)
SHOWN = 4  # convolution names listed before "... and N more"


def summary_line(record: ArtifactMetadata) -> str:
    layers = record.layers
    if record.recipe["name"] == NOT_QUANTIZED:
        text = "recipe none: every matmul in the model's precision"
    else:
        quantized = sum(1 for layer in layers if layer.recipe != NOT_QUANTIZED)
        text = f"recipe {record.recipe['name']}: {quantized}/{len(layers)} matmuls quantized"
        kept = Counter(layer.note for layer in layers if layer.recipe == NOT_QUANTIZED)
        if kept:
            text += " (kept: " + "; ".join(f"{n} x {why}" for why, n in kept.most_common()) + ")"
    convolutions = convolution_text(record.convolutions)
    return f"{text}; {convolutions}" if convolutions else text


def convolution_text(convolutions: tuple[str, ...]) -> str:
    """``3 convolutions kept in high precision (recipes quantize matmuls only): stem, ...``,
    or '' for a model without any."""
    if not convolutions:
        return ""
    names = ", ".join(name or "<top>" for name in convolutions[:SHOWN])
    if len(convolutions) > SHOWN:
        names += f", ... and {len(convolutions) - SHOWN} more"
    plural = "s" if len(convolutions) > 1 else ""
    return (
        f"{len(convolutions)} convolution{plural} kept in high precision "
        f"(recipes quantize matmuls only): {names}"
    )
