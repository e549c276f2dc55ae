"""Pass ``quantize-matmuls``: the recipe pass.

Expects torch-dialect IR from the FX importer (``torch.aten.linear``/``mm``/``addmm``/``matmul``/
``bmm`` in their dtypes, weights as ``torch.vtensor.literal``). Rewrites every matmul one of whose
operands is a weight (every matmul, with ``quantize-all-matmuls``) into the recipe's named ops:

    x (f32) → amax → compute_scale → quantize ─┐
    w (f32) → amax → compute_scale → quantize ─┴→ scaled_matmul → (+ bias in f32) → cast to dtype

Weights keep their chain here (readable); ``fold-constant-quantize`` evaluates it at compile time.
A batched matmul of an activation and a constant ``[E, K, N]`` weight (MoE experts) is first split
into one 2-D matmul per expert, named ``<layer>.expert<i>`` (``ir/expert_matmuls.py``).
A matmul it leaves in high precision gets ``qmlir.kept_high_precision = "<reason>"``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass

from iree.compiler import ir

from passes.base.module_pass import ModulePass, option_text, register_pass
from passes.ir import torch_ops
from passes.ir.expert_matmuls import expert_count, expert_name, split_experts
from passes.ir.layer_names import layer_name
from passes.ir.named_ops import GEMM_ATTR, ROLES_ATTR, NamedOpBuilder
from passes.ir.types import DYNAMIC, FLOAT_DTYPES, TensorInfo, tensor_info
from passes.ir.walk import ops_where
from passes.recipes import (
    NoQuantization,
    QuantizedOperand,
    Recipe,
    Role,
    ScalingRecipe,
    Usage,
    get_recipe,
)

KEPT_ATTR = "qmlir.kept_high_precision"
RECIPE_ATTR = "qmlir.recipe"
WHY_ATTR = "qmlir.recipe_reason"
# how the notes of matmuls the user chose to keep in high precision begin
EXCLUDED = "excluded by --exclude"
LAYER_RECIPE = "--layer-recipe"
DEFAULT_RECIPE = "recipe"
ROUTER = "an MoE router (its top-k choice of experts stays in the model's precision)"
STORED_UNQUANTIZED = "stored in high precision in the quantized checkpoint"
USER_CHOICES = (EXCLUDED, LAYER_RECIPE, f"{DEFAULT_RECIPE} 'none'")


@dataclass(frozen=True)
class MatmulSite:
    """One matmul: ``out = a @ b`` (``b`` given as ``[N, K]`` when ``b_transposed``) + bias."""

    op: ir.Operation
    a: ir.Value
    b: ir.Value
    b_transposed: bool
    bias: ir.Value | None
    layer: str
    roles: tuple[Role, Role]


@register_pass
@dataclasses.dataclass(frozen=True)
class QuantizeMatmuls(ModulePass):
    name = "quantize-matmuls"

    recipe: Recipe = NoQuantization()
    quantize_all_matmuls: bool = False
    # globs over module paths (``model.named_modules()`` names): excluded layers stay in high
    # precision; the first matching (glob, recipe) pair picks a layer's recipe
    exclude: tuple[str, ...] = ()
    layer_recipes: tuple[tuple[str, Recipe], ...] = ()
    # layers kept in high precision unless a layer recipe names them: MoE routers (module
    # paths, ``compiler/frontend/moe.py``)
    routers: tuple[str, ...] = ()
    # layers a quantized checkpoint stores in high precision (module paths), kept so
    unquantized: tuple[str, ...] = ()
    # fixed activation scales (``scale_inv``, the dequantizing multiplier) by layer: a
    # checkpoint's ``input_scale``s, or calibrated
    activation_scales: tuple[tuple[str, float], ...] = ()

    @classmethod
    def from_options(cls, options: dict[str, str]) -> QuantizeMatmuls:
        """``recipe=R quantize-all-matmuls=B exclude=G1,G2 layer-recipes=G1:R1,G2:R2
        routers=L1,L2 unquantized=L1,L2 <R opts>``."""
        opts = {k.replace("-", "_"): v for k, v in options.items()}
        recipe_name = opts.pop("recipe", "fp8-current")
        quantize_all = opts.pop("quantize_all_matmuls", "false").lower() in ("1", "true", "yes")
        exclude = tuple(g for g in opts.pop("exclude", "").split(",") if g)
        routers = tuple(g for g in opts.pop("routers", "").split(",") if g)
        unquantized = tuple(g for g in opts.pop("unquantized", "").split(",") if g)
        scales = [item.rpartition("=") for item in opts.pop("activation_scales", "").split(",")]
        static = tuple((layer, float.fromhex(v)) for layer, _, v in scales if layer)
        pairs = [item.rpartition(":") for item in opts.pop("layer_recipes", "").split(",") if item]
        recipe = get_recipe(recipe_name, opts)
        return cls(
            recipe=recipe,
            quantize_all_matmuls=quantize_all,
            exclude=exclude,
            layer_recipes=tuple((g, get_recipe(r)) for g, _, r in pairs),
            routers=routers,
            unquantized=unquantized,
            activation_scales=static,
        )

    def options(self) -> dict[str, str]:
        """:meth:`from_options`'s text for this pass (layer recipes by name: default options)."""
        out = {"recipe": self.recipe.name}
        out.update((key, option_text(value)) for key, value in self.recipe.options().items())
        if self.quantize_all_matmuls:
            out["quantize-all-matmuls"] = "true"
        if self.exclude:
            out["exclude"] = ",".join(self.exclude)
        if self.layer_recipes:
            out["layer-recipes"] = ",".join(f"{g}:{r.name}" for g, r in self.layer_recipes)
        if self.routers:
            out["routers"] = ",".join(self.routers)
        if self.unquantized:
            out["unquantized"] = ",".join(self.unquantized)
        if self.activation_scales:
            out["activation-scales"] = ",".join(
                f"{layer}={float(v).hex()}" for layer, v in self.activation_scales
            )
        return out

    def choose(self, layer: str, *also: str) -> tuple[ScalingRecipe | None, str]:
        """The recipe for a layer (None: high precision) and why; a glob picks the layer when it
        matches ``layer`` or one of ``also`` (an expert's own name, then its matmul's layer)."""
        names = (layer, *also)
        for glob in self.exclude:
            if any(fnmatch.fnmatchcase(n, glob) for n in names):
                return None, f"{EXCLUDED} '{glob}'"
        for glob, recipe in self.layer_recipes:
            if any(fnmatch.fnmatchcase(n, glob) for n in names):
                why = f"{LAYER_RECIPE} '{glob}={recipe.name}'"
                return (recipe if isinstance(recipe, ScalingRecipe) else None), why
        if layer in self.routers:
            return None, ROUTER
        if layer in self.unquantized:
            return None, STORED_UNQUANTIZED
        if not isinstance(self.recipe, ScalingRecipe):
            return None, f"{DEFAULT_RECIPE} '{self.recipe.name}'"
        return self.recipe, "the default recipe"

    def apply(self, module: ir.Module) -> None:
        recipes = [self.recipe, *(r for _, r in self.layer_recipes)]
        if not any(isinstance(r, ScalingRecipe) for r in recipes):
            return
        found = ops_where(module.operation, lambda op: op.name in torch_ops.MATMUL_OPS)
        builder = NamedOpBuilder(module)
        casts: Casts = {}
        for op in found:
            if expert_count(op):
                self._apply_experts(op, builder, casts)
            else:
                self._apply_one(op, builder, casts, *self.choose(layer_name(op)))

    def _apply_experts(self, op: ir.Operation, builder: NamedOpBuilder, casts: Casts) -> None:
        """A batched weight: each expert is a 2-D matmul of its own, named and chosen as a layer
        (``ir/expert_matmuls.py``); kept whole when no expert is quantized."""
        layer = layer_name(op)
        names = [expert_name(layer, i) for i in range(expert_count(op))]
        choices = [self.choose(name, layer) for name in names]
        if all(recipe is None for recipe, _ in choices):
            op.attributes[KEPT_ATTR] = ir.StringAttr.get(choices[0][1])
            return
        for mm, (recipe, why) in zip(split_experts(op, names), choices, strict=True):
            self._apply_one(mm, builder, casts, recipe, why)

    def _apply_one(
        self,
        op: ir.Operation,
        builder: NamedOpBuilder,
        casts: Casts,
        recipe: ScalingRecipe | None,
        why: str,
    ) -> None:
        if recipe is None:
            op.attributes[KEPT_ATTR] = ir.StringAttr.get(why)
            return
        site, reason = self._match(op, recipe)
        if site is None:
            op.attributes[KEPT_ATTR] = ir.StringAttr.get(reason)
            return
        self._rewrite(site, builder, casts, recipe, why)

    def _match(self, op: ir.Operation, recipe: ScalingRecipe) -> tuple[MatmulSite | None, str]:
        operands = list(op.operands)
        bias: ir.Value | None = None
        if op.name == "torch.aten.linear":
            a, b, bias = operands[0], operands[1], operands[2]
            transposed = True
            if torch_ops.is_none(bias):
                bias = None
        elif op.name == "torch.aten.addmm":
            bias, a, b = operands[0], operands[1], operands[2]
            if (
                torch_ops.constant_number(operands[3]) != 1
                or torch_ops.constant_number(operands[4]) != 1
            ):
                return None, "addmm with beta or alpha other than 1"
            transposed = False
        else:
            a, b = operands[0], operands[1]
            transposed = False
        if ROLES_ATTR in op.attributes and not transposed:
            # a training step's fprop reads ``t(W)``: quantized as W itself, rowwise along its
            # contraction dim (TE's rowwise usage), the GEMM reading it transposed; dgrad reads
            # W too (columnwise), so both casts start from the one contiguous tensor
            inner = torch_ops.defining_op(b)
            if inner is not None and inner.name == "torch.aten.t":
                b, transposed = inner.operands[0], True
        roles = _roles(op, a, b)
        # a training step's three GEMMs of a linear (training-gemms) count as its weight's
        has_weight = Role.WEIGHT in roles or Role.PARAMETER in roles or GEMM_ATTR in op.attributes
        if torch_ops.is_literal(a) and torch_ops.is_literal(b):
            return None, "both operands are constants"
        if not has_weight and not self.quantize_all_matmuls:
            return None, "no operand is a weight (use --quantize-all-matmuls)"
        a_info, b_info = tensor_info(a.type, dynamic=True), tensor_info(b.type, dynamic=True)
        out_info = tensor_info(op.results[0].type, dynamic=True)
        if a_info is None or b_info is None or out_info is None:
            return None, "dynamic or unknown shape"
        if not (a_info.is_static and b_info.is_static and out_info.is_static):
            if not _dynamic_rows_only(a_info, b_info, out_info):
                return None, "dynamic or unknown shape"
            refusal = recipe.dynamic_rows_refusal()
            if refusal is not None:
                return None, refusal
        if out_info.dtype not in FLOAT_DTYPES or a_info.dtype not in FLOAT_DTYPES:
            return None, f"element type {out_info.dtype} is not a float type qmlir quantizes"
        if not _supported_ranks(a_info, b_info):
            return None, f"operand shapes {list(a_info.shape)} x {list(b_info.shape)} not supported"
        if recipe.two_dimensional and b_info.rank != 2:
            return None, f"recipe '{recipe.name}' quantizes 2-D operands (batched matmul)"
        if bias is not None and tensor_info(bias.type) is None:
            return None, "bias of unknown shape"
        return MatmulSite(op, a, b, transposed, bias, layer_name(op), roles), ""

    def _rewrite(
        self,
        site: MatmulSite,
        builder: NamedOpBuilder,
        casts: Casts,
        recipe: ScalingRecipe,
        why: str,
    ) -> None:
        op = site.op
        out_info = tensor_info(op.results[0].type, dynamic=True)
        assert out_info is not None
        # N-D activations times a 2-D weight are flattened to [M, K] for every recipe: a GEMM with
        # several M dims let IREE fuse the following head transpose into it (MiniLM's Q/K/V
        # projections ran at 15 GFLOP/s as 5-D contractions); block recipes need 2-D anyway
        b_info = tensor_info(site.b.type, dynamic=True)
        flat = recipe.two_dimensional or (b_info is not None and b_info.rank == 2)
        # a [K, N] operand's blocks run down dim 0 (columnwise); one scale per tensor: the same
        b_usage = Usage.ROWWISE if site.b_transposed else Usage.COLUMNWISE
        with ir.InsertionPoint(op), op.location:
            a = torch_ops.to_builtin(torch_ops.convert_dtype(site.a, "f32"))
            b = torch_ops.to_builtin(torch_ops.convert_dtype(site.b, "f32"))
            a_nd = a  # gives the result's dynamic leading dims, if any
            if flat:
                a = torch_ops.collapse_to_2d(a)
            # a training step: one cast per tensor and use
            cast = _caster(casts if ROLES_ATTR in op.attributes else None, recipe, builder, site)
            static = dict(self.activation_scales).get(site.layer)
            if static is not None and site.roles[0] is Role.ACTIVATION:
                qa = recipe.emit_quantize_static(builder, a, static, site.layer)
            else:
                qa = cast(site.a, a, site.roles[0], Usage.ROWWISE)
            qb = cast(site.b, b, site.roles[1], b_usage)
            gemm_out = _flat_out(out_info) if flat else out_info
            y = recipe.emit_scaled_matmul(
                builder, qa, qb, site.b_transposed, gemm_out, layer=site.layer
            )
            y.owner.attributes[RECIPE_ATTR] = ir.StringAttr.get(recipe.name)
            y.owner.attributes[WHY_ATTR] = ir.StringAttr.get(why)
            for attr in (GEMM_ATTR, ROLES_ATTR):  # a training step's (training-gemms)
                if attr in op.attributes:
                    y.owner.attributes[attr] = op.attributes[attr]
            if flat:
                y = torch_ops.expand_from_2d(y, out_info.with_dtype("f32"), a_nd)
            result = torch_ops.from_builtin(y, out_info.with_dtype("f32"))
            if site.bias is not None:
                result = torch_ops.add_tensors(result, torch_ops.convert_dtype(site.bias, "f32"))
            result = torch_ops.convert_dtype(result, out_info.dtype)
        op.results[0].replace_all_uses_with(result)
        op.erase()


def _roles(op: ir.Operation, a: ir.Value, b: ir.Value) -> tuple[Role, Role]:
    """A constant operand (a weight literal) is a weight, quantized at compile time; in a
    training step, ``training-gemms`` says which operands are parameters and gradients."""
    if ROLES_ATTR in op.attributes:
        marked = [ir.StringAttr(r).value for r in ir.ArrayAttr(op.attributes[ROLES_ATTR])]
        roles = [_marked_role(r, v) for r, v in zip(marked, (a, b), strict=True)]
        return roles[0], roles[1]
    first, second = (Role.WEIGHT if torch_ops.is_literal(v) else Role.ACTIVATION for v in (a, b))
    return first, second


Casts = dict[tuple[object, ...], QuantizedOperand]


def _caster(
    casts: Casts | None, recipe: ScalingRecipe, builder: NamedOpBuilder, site: MatmulSite
) -> Callable[[ir.Value, ir.Value, Role, Usage], QuantizedOperand]:
    """``recipe.emit_quantize`` for ``site``'s operands (``source``: the torch value, ``x``: its
    f32 builtin form). With ``casts`` (a training step), a tensor already cast the same way (the
    same recipe, role and type; the same usage where the recipe has blocks) is not cast again:
    ``W`` for fprop and dgrad, ``x`` for fprop and wgrad under a per-tensor recipe. fp8-delayed
    then keeps one history per tensor, as TE does."""

    def cast(source: ir.Value, x: ir.Value, role: Role, usage: Usage) -> QuantizedOperand:
        if casts is None:
            return recipe.emit_quantize(builder, x, role, usage, site.layer)
        key = (source, recipe, role, str(x.type), usage if recipe.two_dimensional else None)
        if key not in casts:
            casts[key] = recipe.emit_quantize(builder, x, role, usage, site.layer)
        return casts[key]

    return cast


def _marked_role(marked: str, operand: ir.Value) -> Role:
    """A training step's ``weight`` is a parameter, or a frozen weight's literal (a weight)."""
    if marked != "weight":
        return Role(marked)
    return Role.WEIGHT if torch_ops.is_literal(operand) else Role.PARAMETER


def _flat_out(out: TensorInfo) -> TensorInfo:
    return TensorInfo((torch_ops.flat_rows(out.shape[:-1]), out.shape[-1]), out.dtype)


def _dynamic_rows_only(a: TensorInfo, b: TensorInfo, out: TensorInfo) -> bool:
    """``[..., K] @ [K, N]`` (or ``[N, K]``) whose only dynamic dims are the activation's and
    result's leading ones: flattened, the rows (tokens) of a 2-D GEMM with a static weight."""
    return (
        b.is_static
        and b.rank == 2
        and a.rank >= 2
        and a.shape[-1] != DYNAMIC
        and out.shape[-1] != DYNAMIC
    )


def _supported_ranks(a: TensorInfo, b: TensorInfo) -> bool:
    """``[..., M, K] @ [K, N]`` or a batched ``[B..., M, K] @ [B..., K, N]`` (same batch dims)."""
    if a.rank < 2 or b.rank < 2:
        return False
    if b.rank == 2:
        return True
    return a.rank == b.rank and a.shape[:-2] == b.shape[:-2]
