"""``qmlir compile``: a model to a .vmfb."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from compiler.cli.common import (
    bytes_printer,
    check_output,
    human_size,
    parse_layer_recipes,
    parse_options,
    print_layers,
)
from compiler.extras import COMPILE
from compiler.runtime.summary import convolution_text, recipe_text
from passes.base.errors import QmlirError

NAME = "compile"
HELP = "compile a model to a .vmfb"
NEEDS = COMPILE
DONE = "done"
DEFAULT_FUNCTION = "build"  # compiler.frontend.model_source's (not imported here: it imports torch)


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument(
        "model",
        help="file.py[:function] (default function: build), a .pt2 file, or a checkpoint folder "
        "(config.json and *.safetensors, as save_pretrained writes them)",
    )
    c.add_argument(
        "--recipe",
        default=None,
        help="scaling recipe (see `qmlir recipes`; default fp8-current, or a quantized "
        "checkpoint folder's own)",
    )
    c.add_argument(
        "-O",
        "--recipe-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a recipe option, e.g. -O force_pow2_scales=true (repeatable)",
    )
    c.add_argument(
        "-o",
        "--output",
        help="output .vmfb (default: <model>.<recipe>.vmfb, or <model>.<function>.<recipe>.vmfb "
        "for a function other than build)",
    )
    c.add_argument(
        "--target", default="llvm-cpu", help="compile target: llvm-cpu (default) or cuda"
    )
    c.add_argument(
        "--cuda-arch",
        metavar="ARCH",
        help="with --target cuda: sm_89, sm_90 (default) or sm_100 (no GPU needed to compile)",
    )
    c.add_argument(
        "--cpu",
        metavar="CPU",
        help="with --target llvm-cpu: host (default: this host's CPU and features), generic "
        "(the architecture's baseline, runs on any host of it) or an LLVM CPU name such as "
        "x86-64-v3 or znver4",
    )
    c.add_argument(
        "--gemm-operands",
        default="auto",
        choices=("auto", "f32", "bf16"),
        help="with --target llvm-cpu: the element type the scaled GEMMs multiply (decoded FP8/FP4 "
        "values, exact in both; f32 sums); auto: bf16 where the CPU has AVX512-BF16, else f32",
    )
    c.add_argument(
        "--decode-gemv",
        default="auto",
        choices=("auto", "off"),
        help="with --target llvm-cpu: one-row FP8 GEMMs (a generator's decode step; per-tensor or "
        "power-of-two block scales) "
        "as matrix-vector products that decode the weights' codes in their loop, and one "
        "query position's attention as a kernel over the KV cache as stored; auto "
        "(default): where the CPU has AVX512-BF16 and AVX512-VBMI, or AVX2, FMA and F16C; "
        "off: the data-tiled GEMM and the decomposed attention",
    )
    c.add_argument("--quantize-all-matmuls", action="store_true", help="also activation matmuls")
    w = c.add_argument_group("weights and checkpoint folders")
    w.add_argument(
        "--weights",
        default="auto",
        choices=("auto", "inline", "external"),
        help="inline: the .vmfb holds the weights; external: they go to "
        "<output name>.params.safetensors beside it, written one weight at a time; auto "
        "(default): external for a checkpoint folder, inline otherwise",
    )
    w.add_argument(
        "--pack-weights",
        default="auto",
        choices=("auto", "load", "call", "decoded", "panels"),
        help="llvm-cpu: when IREE packs the weights into its GEMM tiles: load (once, a second "
        "copy in memory beside the weights), call (every call: less memory, slower) or "
        "decoded (as load, and a parameter file's FP8/FP4 weights decoded once at load "
        "instead of in every call: faster, the decoded copies in memory), panels (as decoded; "
        "a dynamic artifact's FP8/FP4 GEMMs multiply the decoded weights, laid out once as the "
        "hand-written bf16 GEMM's panels, with row-major outputs: 0.9-1.09x the default's "
        "time, by model and row count); auto (default): "
        "decoded for --generate with --weights external where the decoded copies take at most "
        "half of this host's memory and the decode step does not read every weight's codes "
        "as stored (--decode-gemv), load otherwise",
    )
    w.add_argument(
        "--output-field",
        metavar="NAME",
        help="a folder's model: the output field to compile (logits, pooler_output, ...; "
        "default: next-token logits of a *ForCausalLM, else last_hidden_state)",
    )
    w.add_argument(
        "--batch", type=int, metavar="N", help="a folder's model: a static batch (default: 1..64)"
    )
    w.add_argument(
        "--seq",
        type=int,
        metavar="N",
        help="a folder's model: a static sequence length (default: 1..max_position_embeddings)",
    )
    g = c.add_argument_group("generation (--generate: a causal LM with its KV cache)")
    g.add_argument(
        "--generate",
        action="store_true",
        help="compile a generator: a *ForCausalLM (a checkpoint folder, or a build function "
        "returning one) whose module holds a KV cache; run it with qmlir generate",
    )
    g.add_argument(
        "--max-seq-len",
        type=int,
        metavar="N",
        help="with --generate: positions in the cache, prompt and new tokens (default: the "
        "config's max_position_embeddings)",
    )
    g.add_argument(
        "--max-batch",
        type=int,
        default=1,
        metavar="N",
        help="with --generate: sequences generated at once, at most (default: 1)",
    )
    g.add_argument(
        "--kv-cache",
        choices=("model", "fp8"),
        default="model",
        help="with --generate: the KV cache's format: the model's dtype (default), or fp8 (E4M3 "
        "codes, an E8M0 scale per 32 values of a head vector; about half a bf16 cache's bytes)",
    )
    g.add_argument(
        "--tokenizer",
        metavar="DIR",
        help="with --generate: the folder of the tokenizer to store in the artifact, for qmlir "
        "generate --prompt (default: the checkpoint folder's own tokenizer files, if any)",
    )
    t = c.add_argument_group("training (--train: a step whose model's forward returns the loss)")
    t.add_argument(
        "--train",
        action="store_true",
        help="compile one training step: forward, backward (every linear's fprop, dgrad and "
        "wgrad quantized by the recipe) and an optimizer update; run it with qmlir train",
    )
    t.add_argument("--optimizer", default="sgd", choices=("sgd", "adamw"), help="default: sgd")
    t.add_argument("--lr", type=float, default=1e-3, help="learning rate (default: 1e-3)")
    t.add_argument("--weight-decay", type=float, default=0.0, help="default: 0")
    t.add_argument("--momentum", type=float, default=0.0, help="sgd's momentum (default: 0)")
    t.add_argument(
        "--betas",
        type=float,
        nargs=2,
        default=(0.9, 0.999),
        metavar=("BETA1", "BETA2"),
        help="adamw's betas (default: 0.9 0.999)",
    )
    t.add_argument("--eps", type=float, default=1e-8, help="adamw's eps (default: 1e-8)")
    c.add_argument(
        "--attention",
        default="auto",
        choices=("auto", "matmuls", "fused"),
        help="scaled_dot_product_attention as bmm+softmax+bmm (matmuls) or one IREE attention op "
        "(fused); auto: matmuls on llvm-cpu and with --quantize-all-matmuls, fused otherwise",
    )
    c.add_argument(
        "--experts",
        default="auto",
        choices=("auto", "routed", "dense"),
        help="MoE experts each over the tokens routed to them (routed) or every expert over "
        "every token, masked (dense); auto: routed (on cuda with one spare zero row an expert)",
    )
    c.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="keep matmuls of layers matching GLOB (module paths, e.g. 'lm_head', '*.attn.*') "
        "in high precision (repeatable)",
    )
    c.add_argument(
        "--layer-recipe",
        action="append",
        default=[],
        metavar="GLOB=RECIPE",
        help="layers matching GLOB use RECIPE (with its default options); the first match "
        "wins (repeatable)",
    )
    c.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="an iree-compile flag passed as is after qmlir's own, e.g. "
        "--iree-flag=--iree-opt-data-tiling=false (repeatable; for experiments)",
    )
    c.add_argument(
        "--dynamic",
        action="append",
        default=[],
        metavar="INPUT:DIM=NAME[:MIN..MAX]",
        help="make a dim of an input dynamic, e.g. input_ids:0=batch:1..64 (dims sharing a "
        "NAME have equal sizes; repeatable); a build function may return dynamic_shapes instead",
    )
    c.add_argument(
        "--allow-unquantized",
        action="store_true",
        help="compile even when the recipe quantizes none of the model's matmuls",
    )
    c.add_argument("--explain", action="store_true", help="print which layer got which recipe")
    c.add_argument(
        "--activation-scales",
        metavar="FILE.json",
        help="fixed activation scales by layer (qmlir calibrate's), fp8-current",
    )
    c.add_argument(
        "--plan",
        metavar="FILE.json",
        help="a recipe per layer (qmlir search's plan): its layers first, then --layer-recipe; "
        "the default recipe is none unless --recipe names one",
    )
    c.add_argument("--dump-ir", metavar="DIR", help="write the IR after every stage to DIR")
    c.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    # compiling needs the compile extra (torch, iree.compiler); run/inspect must not. What can be
    # refused without the model is, before torch is imported and the model built (seconds each)
    from compiler.frontend.quantized_formats import folder_recipe
    from compiler.pipeline.target import resolve_target
    from passes.recipes import get_recipe

    folder = Path(args.model).is_dir()
    plan: tuple[tuple[str, Any], ...] = ()
    if args.plan is not None:
        from compiler.cli.search import read_plan

        plan = tuple((layer, get_recipe(r)) for layer, r in read_plan(args.plan).items())
        if args.recipe is None:
            args.recipe = "none"  # the plan names every layer it quantizes
    name, recipe_options = folder_recipe(
        Path(args.model) if folder else None, args.recipe, parse_options(args.recipe_option)
    )
    recipe = get_recipe(name, recipe_options)
    layer_recipes = plan + parse_layer_recipes(args.layer_recipe)
    output = Path(args.output) if args.output else _default_output(args.model, recipe.name)
    check_output(output)
    weights = args.weights if args.weights != "auto" else ("external" if folder else "inline")
    target = resolve_target(args.target, args.cuda_arch, args.cpu)

    from compiler.pipeline.options import CompileOptions, attention_as_matmuls
    from passes.ir.dialect import OpKind

    options = CompileOptions(
        recipe=recipe,
        target=target,
        quantize_all_matmuls=args.quantize_all_matmuls,
        attention=args.attention,
        experts=args.experts,
        iree_flags=tuple(args.iree_flag),
        dump_ir=Path(args.dump_ir) if args.dump_ir else None,
        exclude=tuple(args.exclude),
        layer_recipes=layer_recipes,
        allow_unquantized=args.allow_unquantized,
        gemm_operands=args.gemm_operands,
        weights=weights,
        pack_weights=args.pack_weights,
        decode_gemv=args.decode_gemv,
        activation_scales=_activation_scales(args),
    )
    if weights == "external" and args.train:
        raise QmlirError("--train keeps the weights in the step: drop --weights external")
    _check_generate(args)
    attention_as_matmuls(options)  # a contradictory --attention, before the model is built
    optimizer = _optimizer(args)
    start = time.perf_counter()
    progress = _progress_printer(args.quiet)
    if progress:
        progress("load model")
    if args.generate:
        compiled = _compile_generator(args, options, output, progress)
    else:
        compiled = _compile(args, options, optimizer, output, progress)
    if progress:
        progress("save")
    try:
        compiled.save(output)
    except OSError as e:
        raise QmlirError(f"cannot write '{output}': {e.strerror or e}") from e
    if progress:
        progress(DONE)
    if args.explain:
        print_layers(compiled.metadata["layers"])
    if not args.quiet:
        layers = compiled.record.layers
        quantized = sum(1 for layer in layers if layer.matmul == OpKind.SCALED_MATMUL.value)
        what = "training step, " if optimizer is not None else ""
        if compiled.record.generation is not None:
            g = compiled.record.generation
            what = f"generator: {g.max_seq} positions x {g.max_batch} sequences, "
        print(
            f"wrote {output} ({what}{human_size(len(compiled.vmfb))}, "
            f"recipe {recipe_text(compiled.record)}, "
            f"{quantized}/{len(layers)} matmuls quantized, {time.perf_counter() - start:.1f} s)"
        )
        if compiled.parameter_file is not None:
            size = human_size(compiled.parameter_file.stat().st_size)
            print(f"wrote {compiled.parameter_file} ({size}, the weights)")
        if (recipe.quantizes or quantized) and quantized < len(layers):
            kept = Counter(
                layer.note for layer in layers if layer.matmul != OpKind.SCALED_MATMUL.value
            )
            reasons = "; ".join(f"{n} x {why}" for why, n in kept.most_common())
            print(f"  kept in high precision: {reasons} (--explain lists them)")
        if compiled.record.convolutions:
            print(f"  {convolution_text(compiled.record.convolutions)}")
    return 0


def _compile(
    args: argparse.Namespace, options: Any, optimizer: Any, output: Path, progress: Any
) -> Any:
    """A model (or its training step) from a file, a .pt2 or a folder."""
    from compiler.frontend.dynamic_dims import dynamic_shapes_from_flags
    from compiler.frontend.model_loader import load_model
    from compiler.pipeline.inference import compile_model
    from compiler.runtime.parameters import parameters_beside

    last_mlp = optimizer is None and options.rows_apart  # a causal LM's (final_norm.py)
    source = load_model(
        args.model, output=args.output_field, batch=args.batch, seq=args.seq, last_mlp=last_mlp
    )
    if args.dynamic:
        source.dynamic_shapes = dynamic_shapes_from_flags(source, args.dynamic)
    if optimizer is not None:
        from compiler.pipeline.training import compile_training_model

        compiled = compile_training_model(source, options, optimizer, progress=progress)
    else:
        scratch = output.parent if options.weights == "external" else None  # the parameters
        compiled = compile_model(
            source,
            dataclasses.replace(options, progress_bytes=bytes_printer(args.quiet)),
            progress=progress,
            scratch=scratch,
            parameters_name=parameters_beside(output).name,
        )
    return compiled


def _activation_scales(args: argparse.Namespace) -> tuple[tuple[str, float], ...]:
    from compiler.cli.calibrate import read_scales

    if args.activation_scales is None:
        return ()
    return tuple(sorted(read_scales(args.activation_scales).items()))


def _check_generate(args: argparse.Namespace) -> None:
    """The generation flags only with ``--generate``, and none it cannot take."""
    if not args.generate:
        if (
            args.max_seq_len is not None
            or args.max_batch != 1
            or args.tokenizer is not None
            or args.kv_cache != "model"
        ):
            raise QmlirError(
                "--max-seq-len, --max-batch, --kv-cache and --tokenizer need --generate"
            )
        return
    clashes = [
        flag
        for flag, given in (
            ("--train", args.train),
            ("--dynamic", bool(args.dynamic)),
            ("--batch", args.batch is not None),
            ("--seq", args.seq is not None),
            ("--output-field", args.output_field is not None),
        )
        if given
    ]
    if clashes:
        raise QmlirError(
            f"--generate compiles prefill and decode steps (batch --max-batch, positions "
            f"--max-seq-len): drop {', '.join(clashes)}"
        )


def _compile_generator(args: argparse.Namespace, options: Any, output: Path, progress: Any) -> Any:
    """A generator from a checkpoint folder, or from a build function returning a causal LM."""
    from compiler.frontend.model_loader import load_model
    from compiler.pipeline.generation import compile_generator_model
    from compiler.runtime.parameters import parameters_beside

    model: Any = Path(args.model)
    if not model.is_dir():
        model = load_model(args.model).module
    return compile_generator_model(
        model,
        dataclasses.replace(options, progress_bytes=bytes_printer(args.quiet)),
        max_seq=args.max_seq_len,
        max_batch=args.max_batch,
        kv_cache=args.kv_cache,
        progress=progress,
        scratch=output.parent if options.weights == "external" else None,
        parameters_name=parameters_beside(output).name,
        tokenizer=args.tokenizer,
    )


def _optimizer(args: argparse.Namespace) -> Any:
    """The optimizer of ``--train`` (checked before the model is built), else None; training
    flags without ``--train`` are an error, not silently ignored."""
    from compiler.frontend.optimizers import OptimizerOptions

    chosen = OptimizerOptions(
        args.optimizer,
        args.lr,
        args.weight_decay,
        args.momentum,
        (args.betas[0], args.betas[1]),
        args.eps,
    )
    if args.train:
        if args.dynamic:
            raise QmlirError("--train compiles static shapes: drop --dynamic")
        return chosen
    if chosen != OptimizerOptions():
        raise QmlirError("--optimizer, --lr and the other training flags need --train")
    return None


def _progress_printer(quiet: bool) -> Any:
    """Stage-by-stage progress on stderr, a line per finished stage with its time; only on a
    terminal, and not with -q. Call it with each stage as it starts, then with ``DONE``."""
    if quiet or not sys.stderr.isatty():
        return None
    current: list[Any] = [None, time.perf_counter()]

    def report(stage: str) -> None:
        now = time.perf_counter()
        if current[0] is not None:
            print(f"  {current[0]:<13} {now - current[1]:6.2f} s", file=sys.stderr, flush=True)
        current[0], current[1] = (None if stage == DONE else stage), now

    return report


def _default_output(model: str, recipe: str) -> Path:
    """``<stem>.<recipe>.vmfb`` in the current directory; ``<stem>.<function>.<recipe>.vmfb``
    for a ``file.py:function`` other than ``build`` (so two functions of a file do not overwrite
    each other's artifact)."""
    path, _, function = model.partition(":")
    stem = Path(path).resolve().name if Path(path).is_dir() else Path(path).stem
    if function and function != DEFAULT_FUNCTION:
        return Path(f"{stem}.{function}.{recipe}.vmfb")
    return Path(f"{stem}.{recipe}.vmfb")
