"""Pass ``round-gemm-outputs`` (llvm-cpu, after ``prefill-gemm``): a codes GEMM whose f32
result the model only rounds to bf16 rounds it itself, as it stores its outputs.

``quantize-matmuls`` leaves each quantized linear of a bf16 model as ``scaled_matmul`` (f32)
→ ``convert_element_type`` to bf16 (the bias, if any, added in f32 between them). IREE cannot
fuse that rounding (nor per-tensor scales' multiply before it) into ``prefill-gemm``'s
hand-written executable: it ran as a dispatch of its own, reading every f32 output back from
memory and writing it again in bf16 (113M outputs a 512-token prefill of the 0.35B generator,
30 ms of CPU time, benchmarks/RESULTS.md). Here each call of a ``codes_gemm`` ``scaled_matmul``
whose result goes (through a ``tensor.expand_shape`` back to the activation's rows, then
``torch_c.from_builtin_tensor``) only into a ``convert_element_type`` to bf16 calls a
declaration of its own marked ``rounded``, whose result is bf16: the GEMM multiplies its sums by
the per-tensor (nvfp4: global) scales and rounds them (``arith.truncf``, to nearest, ties to
even) as its last block of K stores them (``passes/lowering/cpu/gemm.py``). The same operations
in the same order: the outputs are bit for bit those of the separate dispatch
(tests/e2e/test_prefill_gemm.py). A call whose result goes anywhere else (a bias added, an f32
output) keeps the f32 declaration.
"""

from __future__ import annotations

import dataclasses

from iree.compiler import ir

from passes.base.module_pass import ModulePass, register_pass
from passes.fusion.calls import NamedCalls, only_use
from passes.fusion.scale_chains import scaled_matmul_sites
from passes.ir import torch_ops
from passes.ir.dialect import Attrs, NamedOp, OpKind
from passes.ir.named_ops import NamedOpBuilder, erase_uncalled_declarations, variant_of
from passes.ir.types import tensor_info


@register_pass
@dataclasses.dataclass(frozen=True)
class RoundGemmOutputs(ModulePass):
    name = "round-gemm-outputs"

    def apply(self, module: ir.Module) -> None:
        calls = NamedCalls(module)
        builder = NamedOpBuilder(module)
        rewritten: set[str] = set()
        for name, sites in scaled_matmul_sites(module, calls).items():
            attrs = NamedOp(calls.decls[name]).attrs
            if not attrs.codes_gemm or attrs.rounded:
                continue
            record = dataclasses.replace(attrs, rounded=True)
            variant = f"{variant_of(name, OpKind.SCALED_MATMUL)}.rounded"
            for call in sites:
                chain = _rounding_chain(call)
                if chain is None:
                    continue
                _round(builder, record, variant, call, chain)
                rewritten.add(name)
        erase_uncalled_declarations(module, rewritten)


def _rounding_chain(call: ir.Operation) -> list[ir.Operation] | None:
    """The ops from ``call``'s f32 result to its only consumer, a conversion to bf16: an
    optional ``tensor.expand_shape``, ``torch_c.from_builtin_tensor``, the conversion; None
    where the result goes anywhere else."""
    chain: list[ir.Operation] = []
    user = only_use(call.results[0])
    if user is not None and user.name == "tensor.expand_shape":
        chain.append(user)
        user = only_use(user.results[0])
    if user is None or user.name != "torch_c.from_builtin_tensor":
        return None
    chain.append(user)
    convert = only_use(user.results[0])
    if convert is None or convert.name != "torch.prims.convert_element_type":
        return None
    info = tensor_info(convert.results[0].type, dynamic=True)
    if info is None or info.dtype != "bf16":
        return None
    return [*chain, convert]


def _round(
    builder: NamedOpBuilder,
    record: Attrs,
    variant: str,
    call: ir.Operation,
    chain: list[ir.Operation],
) -> None:
    """``call`` as a call of the rounded declaration: the ops between it and the conversion
    carry bf16, and the conversion's users read the last of them."""
    *views, convert = chain
    out = tensor_info(call.results[0].type, dynamic=True)
    assert out is not None
    builder.replace_call(
        call, record, variant, list(call.operands), [out.with_dtype("bf16").builtin()]
    )
    for view in views:
        info = tensor_info(view.results[0].type, dynamic=True)
        assert info is not None
        bf16 = info.with_dtype("bf16")
        torch_side = view.name == "torch_c.from_builtin_tensor"
        view.results[0].set_type(bf16.vtensor() if torch_side else bf16.builtin())
    convert.results[0].replace_all_uses_with(views[-1].results[0])
    torch_ops.erase_unused(convert)  # and its dtype's constant
