"""qmlir's passes over IREE's MLIR bindings, one module per pass (file name = pass name).

In the order the compile runs them (``compiler/pipeline/core.py``, with ``inference.py``'s and
``training.py``'s hooks):

- ``fold-weight-views`` (inference, training): a weight reached through views is a literal again.
- ``training-gemms`` (training): marks each linear's fprop, dgrad, wgrad and operand roles.
- ``add-decode-step`` (generators): ``@decode``, ``@main`` with one token a call, its shapes static.
- ``slice-cache-writes`` (generators, llvm-cpu): a prefill's KV cache write as a slice's copy.
- ``check-indices`` (inference, training): indices the model computes, bound-checked at the call.
- ``unshare-scatter-inits`` (inference, training): a scatter into a fill (dynamic): its own init.
- ``kv-cache-codes`` (inference): an FP8 KV cache's quantize and dequantize as named ops.
- ``quantize-matmuls`` (inference, training): the recipe pass; matmuls become named-op chains.
- ``probe-gemms`` (training, test hook only): keeps what each quantized GEMM read.
- ``hold-buffers`` (inference): buffers the model mutates (a KV cache, a counter) as globals.
- ``hold-training-state`` (training): parameters, optimizer state, gradients as module globals.
- ``expose-scaling-state`` (inference, training): public get/set of the module's scaling state.
- ``gemm-operands`` (inference, training): bf16 GEMM operands where exact, on AVX512-BF16 CPUs.
- ``widen-bf16-matmuls`` (llvm-cpu with f32 GEMM operands): bf16 matmuls kept in high precision
  multiply f32, their operands widened exactly.
- ``fold-constant-quantize`` (inference, training): weights quantized at compile time.
- ``externalize-weights`` (inference, ``weights="external"``): weights become parameters of the
  module, read from a parameter file; their quantize is planned for the file's writer.
- ``fuse-quantize-core`` (cuda only): each activation's quantize chain as one ``fused_quantize``.
- ``separate-gemm-operands`` (llvm-cpu; AVX2 code: dynamic rows only): a weight GEMM's input
  apart from its pack.
- ``separate-rotate-half`` (llvm-cpu): a rotary embedding's ``rotate_half`` concatenation as a
  dispatch of its own (IREE fused it into its consumer as an element-by-element gather).
- ``decode-gemv`` (llvm-cpu with AVX512-BF16 and -VBMI, or AVX2, FMA and F16C; runs after
  ``gemm-operands``, before the weights are folded): one-row FP8 and NVFP4 GEMMs
  marked to run as matrix-vector products decoding the weights' codes in their loop.
- ``bf16-decode-gemv`` (llvm-cpu, where ``decode-gemv`` runs; after ``widen-bf16-matmuls``):
  one-row linears of bf16 weights as matrix-vector products over the weights as stored.
- ``bf16-prefill-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI, where ``decode-gemv`` runs and no
  packed copy of the weights is wanted; after ``bf16-decode-gemv``): many-row linears of bf16
  weights as ``prefill-gemm``'s GEMM over the weights as stored.
- ``decode-attention`` (llvm-cpu, where ``decode-gemv`` runs; after ``bf16-decode-gemv``): the
  attention of one query position (static shapes) as a kernel reading the KV cache as stored,
  masked positions skipped.
- ``prefill-attention`` (llvm-cpu, where ``decode-gemv`` runs; after ``decode-attention``): the
  attention of several query positions (a prefill's dynamic number, an encoder's static one)
  as a tiled kernel with softmax's running form, tiles of keys the mask closes skipped.
- ``prefill-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI, where ``decode-gemv`` runs and a call
  would otherwise decode and pack each weight; in ``lower_and_compile``): per-tensor FP8 GEMMs
  of many rows marked to run as GEMMs decoding the weights' codes in their loop.
- ``dynamic-gemm`` (llvm-cpu with AVX512-BF16 and -VBMI, where ``decode-gemv`` runs, under
  ``--pack-weights panels``; after ``prefill-gemm``): scaled GEMMs of a dynamic number of rows
  multiply their decoded operands by ``prefill-gemm``'s bf16 GEMM (row-major outputs), not
  IREE's data-tiled one.
- ``int-fp4-gemm`` (llvm-cpu where ``decode-gemv`` runs its AVX2 variant; in
  ``lower_and_compile``): nvfp4's and mxfp4's many-row GEMMs marked to run in integers (each
  block's E2M1 products summed exactly by ``vpmaddubsw``) rather than as IREE's f32 GEMM.
- ``round-gemm-outputs`` (llvm-cpu, after ``prefill-gemm``): such a GEMM whose f32 result the
  model only rounds to bf16 rounds it (per-tensor scales multiplied first) as it stores it.
- ``compact-block-scales`` (llvm-cpu, before the weights are folded): mx-layout GEMMs read
  their operands' block scales compact, without the swizzle a GPU's GEMM needs.
- ``batched-contractions`` (llvm-cpu AVX2 code, dynamic dims): attention's f32 matmuls of
  [batch, heads, ...] operands as one contraction each, which IREE does not data-tile.
- ``assume-multiples`` (dynamic dims): a size computed as a multiple of a constant (a padded
  key length) told to IREE as one (``util.assume.int``).
- ``lower-named-ops`` (always, last): each named op's body for the target, llvm-cpu or cuda.

Below them, each layer importing only the ones under it: ``recipes/`` (what each scaling recipe
emits), ``lowering/`` (each named op's body per target: ``cpu/``, ``cuda/``), ``host/`` (running
lowered ops on this CPU, IREE's flags), ``fusion/`` (named-op call chains, what
``fuse-quantize-core`` fuses), ``ir/`` (types, torch ops and MoE experts' split, the named ops
and their typed attributes, element formats) and ``base/`` (errors, option parsing, atomic
writes, the names an artifact and the runtime share). No pass imports another
(``tests/unit/test_architecture.py``).

This package imports nothing on its own: ``passes.base`` and ``passes.host.call`` are what the
runtime needs, and they load neither torch nor ``iree.compiler``. ``python -m passes`` runs
passes on an MLIR file (the lit tests' driver).
"""
