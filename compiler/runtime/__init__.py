"""Stage 6, execute: load a sealed artifact and run it. Needs only ``iree-base-runtime``, numpy
and ml_dtypes: nothing here imports torch or ``iree.compiler``.

``module`` (``CompiledModule``), ``training`` (``TrainingStep``: a compiled training step),
``generator`` (``Generator``: a causal LM with its KV cache),
``loading`` (``load``), ``seal`` (the artifact file and its digest), ``metadata`` (the
metadata's typed, versioned record), ``metadata_schema`` (its fields, checked), ``input_check``
(inputs against the signature), ``scaling_health`` (is an fp8-delayed state sound),
``outputs`` (the outputs rebuilt in the structure the model returned).
"""

from compiler.runtime.generator import Generator
from compiler.runtime.input_check import NonFiniteInputWarning
from compiler.runtime.loading import load, read_artifact
from compiler.runtime.module import CompiledModule, open_module, to_numpy, to_torch
from compiler.runtime.scaling_health import ScalingHealthWarning
from compiler.runtime.training import TrainingStep

__all__ = [
    "CompiledModule",
    "Generator",
    "NonFiniteInputWarning",
    "ScalingHealthWarning",
    "TrainingStep",
    "load",
    "open_module",
    "read_artifact",
    "to_numpy",
    "to_torch",
]
