"""The Python API: ``compile``, ``compile_training``, ``compile_generator``, ``report``
(``load`` and ``quantize`` live beside it)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from compiler.analysis.layer_accuracy import Calibration, Report, build_report
from compiler.analysis.recipe_search import SearchPlan
from compiler.frontend.model_loader import load_model
from compiler.frontend.model_source import ModelSource, check_model
from compiler.frontend.optimizers import OptimizerOptions
from compiler.frontend.quantized_formats import folder_recipe
from compiler.pipeline.generation import compile_generator_model
from compiler.pipeline.inference import compile_model
from compiler.pipeline.options import CompileOptions, check_decode_gemv
from compiler.pipeline.target import resolve_target
from compiler.pipeline.training import compile_training_model
from compiler.runtime import CompiledModule, Generator, TrainingStep
from passes.base.errors import QmlirError
from passes.recipes import get_recipe

# "qmlir": compile() logs the artifact's summary here (INFO), which CompiledModule.summary holds
LOG = logging.getLogger("qmlir")


def compile(  # noqa: A001 (the product's API name)
    model: torch.nn.Module | str | Path,
    example_inputs: Any = None,
    recipe: str | None = None,
    target: str = "llvm-cpu",
    *,
    quantize_all_matmuls: bool = False,
    dump_ir: str | Path | None = None,
    exclude: list[str] | tuple[str, ...] = (),
    layer_recipes: dict[str, str] | None = None,
    cuda_arch: str | None = None,
    cpu: str | None = None,
    attention: str = "auto",
    experts: str = "auto",
    dynamic_shapes: Any = None,
    allow_unquantized: bool = False,
    gemm_operands: str = "auto",
    weights: str = "auto",
    parameters: str | Path | None = None,
    pack_weights: str = "load",
    decode_gemv: str = "auto",
    activation_scales: dict[str, float] | None = None,
    output_field: str | None = None,
    batch: int | None = None,
    seq: int | None = None,
    **options: Any,
) -> CompiledModule:
    """Compiles ``model`` for ``target`` with its matmuls quantized by ``recipe`` (default
    ``fp8-current``; a folder holding a quantized checkpoint compiles with its own recipe,
    ``compiler/frontend/quantized_formats.py``, its weights' codes and scales as stored).

    ``options`` are the recipe's options (``qmlir recipes`` lists them), e.g.
    ``compile(m, (x,), "fp8-current", force_pow2_scales=True)``. ``exclude`` globs keep layers
    (module paths of ``model.named_modules()``) in high precision; ``layer_recipes`` maps globs
    to other recipes (default options), the first match winning. ``target="cuda"`` builds for
    an NVIDIA GPU of ``cuda_arch`` (``sm_89``, ``sm_90`` (default), ``sm_100``); no GPU needed.
    ``cpu`` (llvm-cpu): ``host`` (default), ``generic`` or an LLVM CPU name; the artifact records
    it and refuses to run on a host without its features. ``attention``: ``auto``, ``matmuls``
    (SDPA as bmm + softmax + bmm) or ``fused`` (one IREE attention op). ``experts`` (MoE
    layers): ``auto`` or ``routed`` (each expert over the
    tokens routed to it; on cuda with one spare zero row an expert) or ``dense`` (every expert
    over every token, masked).
    ``dynamic_shapes`` is ``torch.export.export``'s argument (``Dim("batch", min=1, max=64)``,
    ``Dim.AUTO``, ...): the artifact takes any size in range. A quantizing recipe that quantizes
    none of the matmuls (e.g. shapes it cannot handle) is an error unless ``allow_unquantized``.
    ``gemm_operands`` (llvm-cpu): the element type the scaled GEMMs multiply, ``auto`` (bf16 on a
    CPU with AVX512-BF16, else f32), ``f32`` or ``bf16``.
    ``weights``: ``inline`` (the module holds them) or ``external`` (a parameter file, written
    one weight at a time to ``parameters``, else to a temporary file that ``save(path)`` moves
    beside the artifact as ``<name>.params.safetensors``); ``auto``: external for a checkpoint
    folder, inline for a module. ``pack_weights`` (llvm-cpu): ``load`` (default: IREE packs the
    weights into its GEMM tiles once, when the module loads, a second copy in memory), ``call``
    (in every call: no second copy, slower calls) or ``decoded`` (as ``load``, and external
    FP8/FP4 weights decoded once at load rather than in every call: faster calls, the decoded
    copies in memory; inline weights are decoded at load under ``load`` already) or ``panels``
    (as ``decoded``; on a CPU with AVX512-BF16 and -VBMI a dynamic artifact's FP8/FP4 GEMMs of
    several rows multiply the decoded weights, laid out once as the hand-written bf16 GEMM's
    panels, with row-major outputs: ``dynamic-gemm``, docs/cli.md has its measurements).
    ``decode_gemv`` (llvm-cpu): ``auto`` (default) runs each one-row FP8 GEMM (per-tensor or
    power-of-two block scales; a generator's decode step, a static one-row compile) as a
    matrix-vector product that decodes the weight's codes in its loop, on a CPU with AVX512-BF16
    and AVX512-VBMI or with AVX2, FMA and F16C (nvfp4's too), and the attention of one query
    position (static shapes) as a kernel over K and V as stored, masked positions skipped, and
    the attention of several positions over static keys (a prefill, an encoder) as a tiled
    kernel with softmax's running form; ``off`` keeps the data-tiled GEMM (the same exact
    products, f32 sums in another order) and the decomposed attention.

    ``activation_scales`` fixes the scale of each named layer's activation (fp8-current, and
    nvfp4's global scale): the dequantizing multiplier ``scale_inv`` by module path, from
    :func:`calibrate` (with the recipe) or a checkpoint's; such an activation is cast with
    ``scale = 1 / scale_inv`` and no amax pass, values past the calibrated range saturating
    (nvfp4's block scales stay dynamic).

    ``model`` may be a checkpoint folder (``config.json`` and ``*.safetensors``, as
    ``save_pretrained`` writes them; ``compiler/frontend/checkpoint.py``): no example inputs,
    it takes ``input_ids``; ``output_field``, ``batch`` and ``seq`` choose what it computes and
    fix its shape (default: next-token logits of a causal LM, else the last hidden state;
    dynamic batch 1..64 and sequence 1..``max_position_embeddings``).
    """
    folder = isinstance(model, (str, Path))
    if folder:
        if example_inputs is not None or dynamic_shapes is not None:
            raise QmlirError("a checkpoint folder takes no example inputs or dynamic_shapes")
        if not Path(model).is_dir():
            raise QmlirError(f"'{model}' is not a checkpoint folder (pass an nn.Module)")
    elif output_field is not None or batch is not None or seq is not None:
        raise QmlirError("output_field, batch and seq apply to a checkpoint folder only")
    compile_options = _model_options(
        model,
        recipe,
        options,
        target=target,
        quantize_all_matmuls=quantize_all_matmuls,
        dump_ir=dump_ir,
        exclude=exclude,
        layer_recipes=layer_recipes,
        cuda_arch=cuda_arch,
        cpu=cpu,
        allow_unquantized=allow_unquantized,
        gemm_operands=gemm_operands,
        weights=weights,
        parameters=parameters,
        pack_weights=pack_weights,
        experts=experts,
        decode_gemv=decode_gemv,
        attention=attention,
        activation_scales=tuple(sorted((activation_scales or {}).items())),
    )
    if isinstance(model, (str, Path)):  # a causal LM's last MLP: final_norm.py
        last_mlp = compile_options.rows_apart
        source = load_model(
            str(model), output=output_field, batch=batch, seq=seq, last_mlp=last_mlp
        )
    else:
        module, inputs = check_model(model, example_inputs, "compile()")
        source = ModelSource(type(module).__name__, module, inputs, dynamic_shapes=dynamic_shapes)
    compiled = compile_model(source, compile_options)
    LOG.info("%s: %s", source.name, compiled.summary)
    return compiled


def _model_options(
    model: Any,
    recipe: str | None,
    options: dict[str, Any],
    *,
    dump_ir: str | Path | None,
    exclude: list[str] | tuple[str, ...],
    weights: str,
    parameters: str | Path | None,
    decode_gemv: str,
    **fields: Any,
) -> CompileOptions:
    """:func:`compile`'s and :func:`compile_generator`'s options: a checkpoint folder's own
    recipe (``folder_recipe``), ``weights="auto"`` external for a folder and inline for a
    module, paths as ``Path``s, ``decode_gemv`` checked; the rest as :func:`_options` takes it."""
    folder = Path(model) if isinstance(model, (str, Path)) else None
    if weights == "auto":
        weights = "external" if folder is not None else "inline"
    recipe, options = folder_recipe(folder, recipe, options)
    return _options(
        recipe,
        options,
        dump_ir=Path(dump_ir) if dump_ir is not None else None,
        exclude=tuple(exclude),
        weights=weights,
        parameters=Path(parameters) if parameters is not None else None,
        decode_gemv=check_decode_gemv(decode_gemv),
        **fields,
    )


def _options(
    recipe: str,
    options: dict[str, Any],
    layer_recipes: dict[str, str] | None,
    target: str,
    cuda_arch: str | None,
    cpu: str | None,
    **fields: Any,
) -> CompileOptions:
    """``CompileOptions`` from the API's arguments: the recipe and its options, the per-layer
    recipes by glob (default options), the target resolved, the other fields as they are."""
    return CompileOptions(
        recipe=get_recipe(recipe, options),
        target=resolve_target(target, cuda_arch, cpu),
        layer_recipes=tuple(
            (glob, get_recipe(name)) for glob, name in (layer_recipes or {}).items()
        ),
        **fields,
    )


def compile_training(
    model: torch.nn.Module,
    example_inputs: Any,
    recipe: str = "fp8-current",
    target: str = "llvm-cpu",
    *,
    optimizer: str = "sgd",
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    momentum: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    quantize_all_matmuls: bool = False,
    dump_ir: str | Path | None = None,
    exclude: list[str] | tuple[str, ...] = (),
    layer_recipes: dict[str, str] | None = None,
    cuda_arch: str | None = None,
    cpu: str | None = None,
    allow_unquantized: bool = False,
    gemm_operands: str = "auto",
    probes: bool = False,
    **options: Any,
) -> TrainingStep:
    """Compiles one training step of ``model``: forward, backward and an optimizer update, every
    linear's three GEMMs (fprop, dgrad, wgrad) quantized by ``recipe`` as TE quantizes them
    (``fp8_format="hybrid"``: gradients in E5M2).

    ``model(*example_inputs)`` must return the loss, a scalar (the targets are inputs).
    ``optimizer``: ``sgd`` (``lr``, ``momentum``, ``weight_decay``) or ``adamw`` (``lr``,
    ``betas``, ``eps``, ``weight_decay``), as ``torch.optim`` computes them. The returned
    :class:`TrainingStep` holds the parameters (initially the model's) and the optimizer's
    state: ``loss = step(*inputs)`` runs one step; ``step.parameters()``,
    ``step.load_parameters(sd)``, ``step.gradients()``, ``step.save(path)``. ``probes`` (a test
    hook) keeps every quantized GEMM's operands for ``step.probes()``. The other arguments are
    :func:`compile`'s.
    """
    module, inputs = check_model(model, example_inputs, "compile_training()")
    source = ModelSource(type(module).__name__, module, inputs)
    return compile_training_model(
        source,
        _options(
            recipe,
            options,
            target=target,
            quantize_all_matmuls=quantize_all_matmuls,
            dump_ir=Path(dump_ir) if dump_ir is not None else None,
            exclude=tuple(exclude),
            layer_recipes=layer_recipes,
            cuda_arch=cuda_arch,
            cpu=cpu,
            allow_unquantized=allow_unquantized,
            gemm_operands=gemm_operands,
        ),
        OptimizerOptions(
            optimizer, lr, weight_decay, momentum, (float(betas[0]), float(betas[1])), eps
        ),
        probes=probes,
    )


def compile_generator(
    model: torch.nn.Module | str | Path,
    recipe: str | None = None,
    target: str = "llvm-cpu",
    *,
    max_seq_len: int | None = None,
    max_batch: int = 1,
    kv_cache: str = "model",
    quantize_all_matmuls: bool = False,
    dump_ir: str | Path | None = None,
    exclude: list[str] | tuple[str, ...] = (),
    layer_recipes: dict[str, str] | None = None,
    cuda_arch: str | None = None,
    cpu: str | None = None,
    allow_unquantized: bool = False,
    gemm_operands: str = "auto",
    weights: str = "auto",
    parameters: str | Path | None = None,
    pack_weights: str = "auto",
    experts: str = "auto",
    decode_gemv: str = "auto",
    tokenizer: Any = None,
    **options: Any,
) -> Generator:
    """Compiles a causal LM (a transformers ``*ForCausalLM`` module, or a checkpoint folder
    holding one) into a generator: one artifact whose module holds a KV cache of
    ``max_seq_len`` positions (default: the config's ``max_position_embeddings``) for up to
    ``max_batch`` sequences, in the model's dtype (``kv_cache="model"``), and runs the prompt
    (prefill, ``@main``) and then one token per step (decode, ``@decode``: the same with its
    shapes static), its matmuls quantized by ``recipe``. ``gen.generate(ids,
    max_new_tokens=...)`` generates; ``gen.save(path)``, and ``compiler.load(path)`` gives a
    :class:`Generator` back. The other arguments are :func:`compile`'s (``weights``: ``auto``
    is external for a folder).
    ``tokenizer`` (a transformers tokenizer or its folder; default: a folder model's own
    tokenizer files) is stored in the artifact: ``gen.generate_text("...")`` and ``qmlir
    generate ART --prompt "..."`` use it. ``pack_weights``: ``auto`` (default) is ``decoded``
    for external weights on llvm-cpu (their decode and packing once, at load) where the decoded
    copies take at most half of this host's memory and the decode step does not multiply every
    weight as stored (``decode_gemv``: then no decoded copies), else ``load``.
    ``decode_gemv``: as for :func:`compile` (the decode step's GEMMs and attention, the
    prefill's attention).
    """
    folder = isinstance(model, (str, Path))
    if folder and not Path(model).is_dir():
        raise QmlirError(f"'{model}' is not a checkpoint folder (pass an nn.Module)")
    if not folder and not isinstance(model, torch.nn.Module):
        raise QmlirError(
            f"compile_generator() takes an nn.Module or a folder, not {type(model).__name__}"
        )
    return compile_generator_model(
        Path(model) if folder else model,  # type: ignore[arg-type]
        _model_options(
            model,
            recipe,
            options,
            target=target,
            quantize_all_matmuls=quantize_all_matmuls,
            dump_ir=dump_ir,
            exclude=exclude,
            layer_recipes=layer_recipes,
            cuda_arch=cuda_arch,
            cpu=cpu,
            allow_unquantized=allow_unquantized,
            gemm_operands=gemm_operands,
            weights=weights,
            parameters=parameters,
            pack_weights=pack_weights,
            experts=experts,
            decode_gemv=decode_gemv,
        ),
        max_seq=max_seq_len,
        max_batch=max_batch,
        kv_cache=kv_cache,
        tokenizer=tokenizer,
    )


def calibrate(
    model: torch.nn.Module,
    batches: Any,
    recipe: str = "fp8-current",
    method: str = "max",
    percentile: float = 99.99,
) -> dict[str, float]:
    """Static activation scales by max calibration: runs ``model`` (eval mode, no gradients)
    on each batch of ``batches`` (a tuple of inputs each, or one tensor) and returns, for every
    ``nn.Linear``, its input's amax over all batches as ``recipe``'s decode scale, by module
    path: the ``activation_scales`` :func:`compile` takes. fp8-current: ``amax / 448`` (f32;
    the multiplier compressed-tensors stores as ``input_scale`` and ModelOpt's max calibration
    computes); nvfp4: ``amax / (448 * 6)``, the global decode scale (ModelOpt's ``input_scale``,
    the inverse of compressed-tensors' ``input_global_scale``). NaN elements are left out of the
    amax, an all-zero input counts as an amax of 1. ``method`` chooses the range in place of
    the amax: ``max`` (default), ``percentile`` (that percentile of ``|x|``, from a 2048-bin
    histogram) or ``mse`` (fp8-current: the range whose E4M3 cast of the data has the least
    squared error); ``compiler/analysis/calibration.py`` has the rules."""
    from compiler.analysis.calibration import calibrate_linear_inputs

    return calibrate_linear_inputs(model, batches, recipe, method, percentile)


def report(
    model: torch.nn.Module,
    example_inputs: Any,
    recipe: str = "fp8-current",
    *,
    inputs: Any = None,
    dynamic_shapes: Any = None,
    quantize_all_matmuls: bool = False,
    exclude: list[str] | tuple[str, ...] = (),
    layer_recipes: dict[str, str] | None = None,
    **options: Any,
) -> Report:
    """Per-layer accuracy of ``recipe`` on ``model`` (``qmlir report``): a ``Report`` whose
    ``layers`` hold each matmul's weight, activation and output SQNR, underflow and saturation,
    measured on ``inputs`` (default: ``example_inputs``): a tensor or a tuple of tensors (one
    batch), or a list of tuples (several batches: every figure is over all of them). Each
    batch must be a size the artifact takes: the example's, or with ``dynamic_shapes`` (as for
    ``compile``) any size in range. ``suggest_excludes(db)`` lists the layers below ``db`` dB."""
    module, checked = check_model(model, example_inputs, "report()")
    source = ModelSource(type(module).__name__, module, checked, dynamic_shapes=dynamic_shapes)
    return build_report(
        source,
        get_recipe(recipe, options),
        calibration_batches(inputs),
        exclude=tuple(exclude),
        layer_recipes=tuple(
            (glob, get_recipe(name)) for glob, name in (layer_recipes or {}).items()
        ),
        quantize_all_matmuls=quantize_all_matmuls,
    )


def search(
    model: torch.nn.Module,
    example_inputs: Any,
    budget_bits: float,
    recipes: tuple[str, ...] | list[str] = ("none", "fp8-current", "mxfp8", "nvfp4"),
    *,
    calibration: Any = None,
    dynamic_shapes: Any = None,
    measure: bool = True,
    loss: Callable[..., torch.Tensor] | str | None = None,
    metric: str | None = None,
) -> SearchPlan:
    """One recipe per layer whose weights fit ``budget_bits`` per weight element (codes and
    scales), with the least loss of the model's output on ``calibration`` (as ``report``'s
    ``inputs``; default the example inputs): a ``SearchPlan``, a ``{layer: recipe}`` dict that
    ``compile(model, inputs, "none", layer_recipes=plan)`` takes, with ``effective_bits``,
    ``predicted_sqnr_db`` and (``measure``: the plan compiled and run) ``measured_sqnr_db``.
    ``loss(outputs, *inputs)`` (a scalar tensor; the outputs as the model returns them) scores
    the layers by the Fisher metric ModelOpt's ``auto_quantize`` uses, ``Σ (∂loss/∂y ⊙ (y_q -
    y))²`` per layer output ``y``, in place of the noise each adds to the output (``plan.metric``
    says which; ``predicted_sqnr_db`` is then ``-10 log10`` of the summed score);
    ``loss="argmax-ce"``: the cross-entropy of the first output as logits against its own argmax
    (a classifier's or an LM's, without labels). ``metric``: ``sqnr`` (default), ``kl`` (the KL
    divergence of the first output's softmax, logits, from the f32 model's) or ``fisher``
    (``loss``'s, default ``argmax-ce``).
    Scores, size rule and solver: ``compiler/analysis/recipe_search.py``."""
    from compiler.analysis.recipe_search import search_plan

    module, checked = check_model(model, example_inputs, "search()")
    source = ModelSource(type(module).__name__, module, checked, dynamic_shapes=dynamic_shapes)

    def compile_plan(plan: dict[str, str]) -> CompiledModule:
        return compile(module, checked, "none", layer_recipes=plan, dynamic_shapes=dynamic_shapes)

    batches = calibration_batches(calibration)
    return search_plan(
        source, budget_bits, recipes, batches, compile_plan if measure else None, loss, metric
    )


def calibration_batches(inputs: Any) -> list[Calibration]:
    """``report``'s ``inputs``: None (the example inputs), a tensor or a tuple of tensors (one
    batch), or a list of tuples (one per batch; an input is never a tuple)."""
    if inputs is None:
        return []
    items = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if items and all(isinstance(item, (tuple, list)) for item in items):
        return [Calibration(f"inputs[{n}]", tuple(batch)) for n, batch in enumerate(items)]
    return [Calibration("inputs", items)]
