"""Runs passes on an MLIR file, for tests: ``python -m passes -p PASS[{opts}] in.mlir``.

Prints the resulting module to stdout (``-`` reads stdin). Several ``-p`` run in order.
"""

from __future__ import annotations

import argparse
import sys

from iree.compiler import ir

from passes import (  # noqa: F401 (each module registers its pass)
    add_decode_step,
    assume_multiples,
    batched_contractions,
    bf16_decode_gemv,
    bf16_prefill_gemm,
    check_indices,
    compact_block_scales,
    decode_attention,
    decode_gemv,
    dynamic_gemm,
    expose_scaling_state,
    externalize_weights,
    fold_constant_quantize,
    fold_weight_views,
    fuse_quantize_core,
    gemm_operands,
    hold_buffers,
    hold_training_state,
    int_fp4_gemm,
    kv_cache_codes,
    lower_named_ops,
    prefill_attention,
    prefill_gemm,
    probe_gemms,
    quantize_matmuls,
    round_gemm_outputs,
    separate_gemm_operands,
    separate_rotate_half,
    slice_cache_writes,
    training_gemms,
    unshare_scatter_inits,
    widen_bf16_matmuls,
)
from passes.base.errors import QmlirError
from passes.base.module_pass import parse_pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m passes", description=__doc__)
    parser.add_argument("-p", "--pass", dest="passes", action="append", default=[], help="pass")
    parser.add_argument("input", help="MLIR file, or - for stdin")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    try:
        pipeline = [parse_pass(p) for p in args.passes]
        with ir.Context() as ctx:
            ctx.allow_unregistered_dialects = False
            module = ir.Module.parse(text)
            for p in pipeline:
                p.apply(module)
            print(module.operation.get_asm(enable_debug_info=False, large_elements_limit=64))
    except QmlirError as e:
        print(f"qmlir-opt: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
