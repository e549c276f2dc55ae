"""An artifact's one-line summary from its record: the recipe, how many of the model's matmuls
it quantized, and what stayed in high precision (matmuls kept, with why; convolutions, which
the recipes do not quantize). ``qmlir compile`` prints it, ``compiler.compile`` logs it, and
``CompiledModule.summary`` returns it."""

from __future__ import annotations

from collections import Counter

from compiler.runtime.metadata import ArtifactMetadata

NOT_QUANTIZED = "none"  # a kept matmul's recipe in the layer table (describe.py)
SHOWN = 4  # convolution names listed before "... and N more"


def recipe_text(record: ArtifactMetadata) -> str:
    """The default recipe, and the layers that per-layer recipes (``--layer-recipe``, a
    ``--plan``, a mixed-precision checkpoint) gave another: ``none, per layer 6 x nvfp4, 4 x
    fp8-current``."""
    name = record.recipe["name"]
    others = Counter(
        layer.recipe for layer in record.layers if layer.recipe not in (NOT_QUANTIZED, name)
    )
    if not others:
        return name
    return f"{name}, per layer " + ", ".join(f"{n} x {r}" for r, n in others.most_common())


def summary_line(record: ArtifactMetadata) -> str:
    layers = record.layers
    quantized = sum(1 for layer in layers if layer.recipe != NOT_QUANTIZED)
    if record.recipe["name"] == NOT_QUANTIZED and not quantized:
        text = "recipe none: every matmul in the model's precision"
    else:
        text = f"recipe {recipe_text(record)}: {quantized}/{len(layers)} matmuls quantized"
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
