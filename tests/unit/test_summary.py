"""An artifact's one-line summary (``compiler/runtime/summary.py``): quantized matmuls out of
all, the kept ones with why, and the convolutions kept in high precision (issue 30, item 4)."""

from __future__ import annotations

from compiler.runtime.metadata import ArtifactMetadata, Layer
from compiler.runtime.summary import convolution_text, summary_line


def _record(**fields: object) -> ArtifactMetadata:
    """A record with only the fields the summary reads."""
    record = object.__new__(ArtifactMetadata)
    values = {
        "recipe": {"name": "fp8-current", "options": {}},
        "layers": (),
        "convolutions": (),
        **fields,
    }
    for name, value in values.items():
        object.__setattr__(record, name, value)
    return record


def test_summary_counts_and_names_what_stayed_in_high_precision() -> None:
    layers = (
        Layer("fc1", "scaled", "fp8-current", ""),
        Layer("head", "torch.aten.mm", "none", "--exclude"),
        Layer("fc2", "scaled", "fp8-current", ""),
    )
    record = _record(layers=layers, convolutions=("stem", "blocks.0"))
    assert summary_line(record) == (
        "recipe fp8-current: 2/3 matmuls quantized (kept: 1 x --exclude); 2 convolutions kept "
        "in high precision (recipes quantize matmuls only): stem, blocks.0"
    )
    assert summary_line(_record(layers=layers[:1])) == "recipe fp8-current: 1/1 matmuls quantized"
    none = _record(recipe={"name": "none", "options": {}}, convolutions=("c",))
    assert summary_line(none).startswith("recipe none: every matmul in the model's precision; 1 ")


def test_per_layer_recipes_are_named() -> None:
    """A plan or --layer-recipe over the default none: the summary says what quantized."""
    layers = (
        Layer("fc1", "scaled", "nvfp4", "--layer-recipe"),
        Layer("fc2", "scaled", "fp8-current", "--layer-recipe"),
        Layer("fc3", "scaled", "nvfp4", "--layer-recipe"),
        Layer("head", "torch.aten.mm", "none", "the default recipe"),
    )
    record = _record(recipe={"name": "none", "options": {}}, layers=layers)
    assert summary_line(record) == (
        "recipe none, per layer 2 x nvfp4, 1 x fp8-current: 3/4 matmuls quantized "
        "(kept: 1 x the default recipe)"
    )


def test_many_convolutions_are_shortened() -> None:
    text = convolution_text(tuple(f"c{i}" for i in range(7)))
    assert text.endswith(": c0, c1, c2, c3, ... and 3 more")
    assert convolution_text(()) == ""
