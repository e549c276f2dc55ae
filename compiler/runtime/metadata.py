"""An artifact's metadata: one typed record, built once and complete by the pipeline, sealed
after the module as JSON (``seal.py``), read back by ``compiler.load`` and ``qmlir inspect``.

``format`` versions the record. This qmlir writes and reads :data:`FORMAT`; an artifact of
another format is refused with both named, before any other field is read. The JSON form
(:meth:`ArtifactMetadata.to_json`) is the one earlier qmlir wrote: the same keys and values.
Fields are checked (``metadata_schema.py``) before the record is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from compiler.runtime.metadata_schema import check_metadata
from passes.base.errors import QmlirError
from passes.base.target import Cpu, Target

FORMAT = "qmlir-artifact/1"

# @main's inputs and outputs: ``{"inputs": [{"shape", "dtype", "name"?, "index_range"?,
# "dims"?}], "outputs": [{"shape", "dtype", "dims"?, "name"?}], "tree"?: ...}``
# (``compiler/backend/artifact.py``, ``input_roles.py``; ``tree``: the structure the model
# returns its outputs in, ``compiler/frontend/output_tree.py``)
Signature = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Layer:
    """A matmul after the recipe pass: its layer, what it became (``scaled_matmul``, or the
    torch op kept), its recipe (``none``: high precision), why; a training step's GEMM
    (``fprop``, ``dgrad``, ``wgrad``)."""

    layer: str
    matmul: str
    recipe: str
    note: str
    gemm: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"layer": self.layer, "matmul": self.matmul, "recipe": self.recipe, "note": self.note}
        if self.gemm is not None:
            out["gemm"] = self.gemm
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Layer:
        gemm = value.get("gemm")
        return cls(value["layer"], value["matmul"], value["recipe"], value["note"], gemm)


@dataclasses.dataclass(frozen=True)
class StateEntry:
    """One fp8-delayed state tensor, in the order ``qmlir.get_scaling_state`` returns them."""

    key: str
    layer: str
    kind: str  # amax_history or scale
    shape: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "layer": self.layer, "kind": self.kind, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> StateEntry:
        return cls(value["key"], value["layer"], value["kind"], tuple(value["shape"]))


@dataclasses.dataclass(frozen=True)
class NamedShape:
    name: str
    shape: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> NamedShape:
        return cls(value["name"], tuple(value["shape"]))


@dataclasses.dataclass(frozen=True)
class Training:
    """A training step's state, in module order: the optimizer (``{"name", <settings>}``), the
    parameters, the optimizer's state; ``probes``: each probed GEMM (the test hook), or None."""

    optimizer: Mapping[str, Any]
    parameters: tuple[NamedShape, ...]
    optimizer_state: tuple[NamedShape, ...]
    probes: tuple[Mapping[str, Any], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "optimizer": dict(self.optimizer),
            "parameters": [p.to_json() for p in self.parameters],
            "optimizer_state": [s.to_json() for s in self.optimizer_state],
        }
        if self.probes is not None:
            out["probes"] = [dict(p) for p in self.probes]
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Training:
        probes = value.get("probes")
        return cls(
            value["optimizer"],
            tuple(NamedShape.from_json(p) for p in value["parameters"]),
            tuple(NamedShape.from_json(s) for s in value["optimizer_state"]),
            None if probes is None else tuple(probes),
        )


@dataclasses.dataclass(frozen=True)
class Parameters:
    """The parameter file a module with weights outside it reads (``weights="external"``): its
    name when written, size, SHA-256 and tensor count (``compiler/runtime/parameters.py``)."""

    file: str
    nbytes: int
    sha256: str
    tensors: int

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "bytes": self.nbytes,
            "sha256": self.sha256,
            "tensors": self.tensors,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Parameters:
        return cls(value["file"], value["bytes"], value["sha256"], value["tensors"])


@dataclasses.dataclass(frozen=True)
class HeldBuffer:
    """A buffer the model mutates, held in the module (``passes/hold_buffers.py``): its dtype
    (the signature's names: ``f32``, ``bf16``, ``si64``, ...) and whether it starts as zeros
    (else the module's ``qmlir.initial_buffers`` returns its initial value)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    zeros: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "zeros": self.zeros,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> HeldBuffer:
        return cls(value["name"], tuple(value["shape"]), value["dtype"], value["zeros"])


@dataclasses.dataclass(frozen=True)
class Generation:
    """A generator artifact (``compile_generator``): ``@main(input_ids [max_batch, T], start
    [1]) -> logits [max_batch, vocab]`` (and ``@decode``, the same at T = 1, where the artifact
    has it) writes T tokens' keys and values into the KV cache the module holds (``layers``
    caches of ``cache_dtype``, ``max_seq`` positions, ``kv_cache`` format) and returns the last
    token's logits; ``eos_token_ids`` end a sequence by default."""

    max_batch: int
    max_seq: int
    vocab: int
    layers: int
    kv_cache: str
    cache_dtype: str
    eos_token_ids: tuple[int, ...] = ()
    pad_token_id: int | None = None
    # the tokenizer's files, packed (compiler/runtime/tokenizer_store.py); None: none stored
    tokenizer: Mapping[str, str] | None = dataclasses.field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
        out["eos_token_ids"] = list(self.eos_token_ids)
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Generation:
        return cls(**{**value, "eos_token_ids": tuple(value.get("eos_token_ids", ()))})


@dataclasses.dataclass(frozen=True)
class ArtifactMetadata:
    """What an artifact was compiled from and what it holds. ``attention`` and ``weights``: an
    inference compile's (absent from a training step's); ``training``: a training step's."""

    qmlir_version: str
    iree_version: str
    model: str
    recipe: Mapping[str, Any]  # ``Recipe.to_dict()``: {"name", "options"}
    target: Target
    quantize_all_matmuls: bool
    exclude: tuple[str, ...]
    layer_recipes: tuple[tuple[str, Mapping[str, Any]], ...]  # (glob, recipe's to_dict())
    signature: Signature
    functions: tuple[str, ...]  # exported, ``main`` first
    layers: tuple[Layer, ...]
    scaling_state: tuple[StateEntry, ...]
    gemm_operands: str | None = None  # the llvm-cpu scaled GEMMs' operand type; f32 on cuda
    attention: str | None = None  # how SDPA was compiled: matmuls or fused
    weights: Mapping[str, int] | None = None  # constant bytes by format
    training: Training | None = None
    parameters: Parameters | None = None  # weights outside the module: the file it reads
    generation: Generation | None = None  # a generator artifact's KV cache and limits
    buffers: tuple[HeldBuffer, ...] = ()  # the model's mutated buffers, held in the module
    # the model's convolutions (their layers), kept in high precision: recipes quantize matmuls
    convolutions: tuple[str, ...] = ()

    format = FORMAT

    @property
    def stateful(self) -> bool:
        """The module keeps state between calls (scaling state, a training step's, buffers the
        model mutates, a KV cache)."""
        held = self.training is not None or self.generation is not None or bool(self.buffers)
        return bool(self.scaling_state) or held

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "qmlir_version": self.qmlir_version,
            "iree_version": self.iree_version,
            "model": self.model,
            "recipe": dict(self.recipe),
            "target": self.target.device,
            "cuda_arch": self.target.cuda_arch,
            "quantize_all_matmuls": self.quantize_all_matmuls,
            "exclude": list(self.exclude),
            "layer_recipes": [[glob, dict(recipe)] for glob, recipe in self.layer_recipes],
            "signature": self.signature,
            "functions": list(self.functions),
            "layers": [layer.to_json() for layer in self.layers],
            "scaling_state": [entry.to_json() for entry in self.scaling_state],
            "cpu": None if self.target.cpu is None else self.target.cpu.to_json(),
        }
        if self.gemm_operands is not None:
            out["gemm_operands"] = self.gemm_operands
        if self.attention is not None:
            out["attention"] = self.attention
        if self.weights is not None:
            out["weights"] = dict(self.weights)
        if self.training is not None:
            out["training"] = self.training.to_json()
        if self.parameters is not None:
            out["parameters"] = self.parameters.to_json()
        if self.generation is not None:
            out["generation"] = self.generation.to_json()
        if self.buffers:
            out["buffers"] = [b.to_json() for b in self.buffers]
        if self.convolutions:
            out["convolutions"] = list(self.convolutions)
        return out

    @classmethod
    def from_json(cls, value: Any) -> ArtifactMetadata:
        """The record of an artifact's JSON metadata; a one-line :class:`QmlirError` for another
        format (both named) or the first field that is missing or wrong."""
        check_format(value)
        check_metadata(value)
        cpu = Cpu.from_json(value["cpu"]) if value.get("cpu") else None
        try:
            target = Target(value["target"], cpu, value["cuda_arch"])
        except QmlirError as e:
            pairing = f"target {value['target']!r} with cuda_arch {_short(value['cuda_arch'])}"
            raise QmlirError(f"a qmlir artifact with malformed metadata: {pairing} ({e})") from None
        training = value.get("training")
        parameters = value.get("parameters")
        generation = value.get("generation")
        return cls(
            qmlir_version=value["qmlir_version"],
            iree_version=value["iree_version"],
            model=value["model"],
            recipe=value["recipe"],
            target=target,
            quantize_all_matmuls=value["quantize_all_matmuls"],
            exclude=tuple(value.get("exclude", ())),
            layer_recipes=tuple((glob, recipe) for glob, recipe in value.get("layer_recipes", ())),
            signature=value["signature"],
            functions=tuple(value["functions"]),
            layers=tuple(Layer.from_json(layer) for layer in value["layers"]),
            scaling_state=tuple(StateEntry.from_json(e) for e in value["scaling_state"]),
            gemm_operands=value.get("gemm_operands"),
            attention=value.get("attention"),
            weights=value.get("weights"),
            training=None if training is None else Training.from_json(training),
            parameters=None if parameters is None else Parameters.from_json(parameters),
            generation=None if generation is None else Generation.from_json(generation),
            buffers=tuple(HeldBuffer.from_json(b) for b in value.get("buffers", ())),
            convolutions=tuple(value.get("convolutions", ())),
        )


def check_format(value: Any) -> None:
    """Refuses metadata of a format other than :data:`FORMAT`, naming both."""
    if not isinstance(value, dict):
        raise QmlirError("a qmlir artifact with malformed metadata: metadata is not an object")
    found = value.get("format")
    if found == FORMAT:
        return
    by = value.get("qmlir_version")
    written = f" (written by qmlir {by})" if isinstance(by, str) else ""
    raise QmlirError(
        f"a qmlir artifact of metadata format {_short(found)}{written}; this qmlir reads "
        f"'{FORMAT}' only: compile the model again with this qmlir, or run the artifact with "
        "the qmlir that wrote it"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
