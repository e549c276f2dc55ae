"""Small checkpoint folders for the tests, written by transformers' own ``save_pretrained``."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import torch

from samples import moe_lm

for _name in ("transformers", "torchao", "torch.utils._pytree"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def llama(
    seed: int = 0, dtype: torch.dtype = torch.float32, tied: bool = False, **overrides: int
) -> torch.nn.Module:
    """A seeded, tiny ``LlamaForCausalLM`` (GQA; its head tied to the embedding if ``tied``)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    sizes = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 256,
        "max_position_embeddings": 64,
        **overrides,
    }
    config = LlamaConfig(tie_word_embeddings=tied, **sizes)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval().to(dtype)


def last_mlp_checks(one_row: bool) -> str:
    """FileCheck lines on :func:`llama`'s imported IR (a dynamic batch): its last layer's MLP
    (three linears, then the head's) over the last position alone, or (``one_row`` False) not."""
    mlp = "CHECK" if one_row else "CHECK-NOT"
    return "\n".join(
        [
            f"{mlp}: torch.aten.linear {{{{.*}}}} -> !torch.vtensor<[?,1,128],f32>",
            f"{mlp}: torch.aten.linear {{{{.*}}}} -> !torch.vtensor<[?,1,128],f32>",
            f"{mlp}: torch.aten.linear {{{{.*}}}} -> !torch.vtensor<[?,1,64],f32>",
            "CHECK: torch.aten.linear {{.*}} -> !torch.vtensor<[?,1,256],f32>",
        ]
    )


def bert(seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny ``BertModel``."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        vocab_size=300,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    return BertModel(config, add_pooling_layer=False).eval()


def byte_tokenizer() -> Any:
    """A transformers fast tokenizer of the 256 byte-level symbols and no merges (every byte one
    token, ids < 256: the small test models' vocabulary)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def save(model: torch.nn.Module, folder: Path, shard: str = "40KB") -> Path:
    """``model.save_pretrained(folder)`` in several shards (``shard`` bytes each at most)."""
    model.save_pretrained(str(folder), max_shard_size=shard)
    return folder


# small configs of the decoder architectures a generator is tested on (random weights)
_DECODERS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": 32}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": 16, "sliding_window": 32}),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", {"head_dim": 16, "sliding_window": 32}),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", {"num_key_value_heads": None}),
}
DECODERS = tuple(_DECODERS)


def decoder(arch: str, seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny causal LM of ``arch`` (one of :data:`DECODERS`), f32."""
    import transformers

    config_name, model_name, extra = _DECODERS[arch]
    sizes = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,  # GQA (GPT-NeoX has none)
        "vocab_size": 256,
        "max_position_embeddings": 128,
        **extra,
    }
    config = getattr(transformers, config_name)(**{k: v for k, v in sizes.items() if v is not None})
    torch.manual_seed(seed)
    return getattr(transformers, model_name)(config).eval()


MOE = moe_lm.ARCHITECTURES


def moe(arch: str, seed: int = 0) -> torch.nn.Module:
    """A seeded, tiny mixture-of-experts causal LM of ``arch`` (``samples/moe_lm.py``)."""
    return moe_lm.make(arch, seed)


def save_fp8_blocks(model: torch.nn.Module, folder: Path, per_tensor: bool = False) -> Path:
    """``model`` saved as a DeepSeek-V3-style FP8 checkpoint (transformers ``quant_method:
    fp8``): ``save_pretrained``'s tensors, every linear weight but the head and MoE routers
    (``.gate.weight``) E4M3 with ``weight_scale_inv`` per 128x128 block (``amax / 448``, the
    weight divided by it and cast, as DeepSeek-V3's ``weight_quant``), or one per tensor with
    ``per_tensor``; activations dynamic. Written here from DeepSeek's rule, independently of
    qmlir."""
    import json

    from safetensors.torch import load_file, save_file

    model.save_pretrained(str(folder))
    saved: dict[str, torch.Tensor] = {}
    for f in sorted(folder.glob("*.safetensors")):
        saved.update(load_file(str(f)))
        f.unlink()
    (folder / "model.safetensors.index.json").unlink(missing_ok=True)
    tensors = {}
    for name, tensor in saved.items():
        module = name.removesuffix(".weight")
        skip = ("embed" in name, module == "lm_head", name.endswith(".gate.weight"))
        if name.endswith(".weight") and tensor.ndim == 2 and not any(skip):
            codes, scale = _fp8_blocks(tensor, per_tensor)
            tensors[name] = codes
            tensors[f"{module}.weight_scale_inv"] = scale
            continue
        tensors[name] = tensor.contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = {
        "quant_method": "fp8",
        "activation_scheme": "dynamic",
        "weight_block_size": None if per_tensor else [128, 128],
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


def _fp8_blocks(weight: torch.Tensor, per_tensor: bool) -> tuple[torch.Tensor, torch.Tensor]:
    x = weight.float()
    if per_tensor:
        scale = x.abs().amax() / 448.0
        return (x / scale).to(torch.float8_e4m3fn), scale.reshape(())
    rows, cols = x.shape
    br, bc = -(-rows // 128), -(-cols // 128)
    padded = torch.zeros(br * 128, bc * 128)
    padded[:rows, :cols] = x
    blocks = padded.reshape(br, 128, bc, 128)
    scale = blocks.abs().amax(dim=(1, 3)) / 448.0
    codes = (blocks / scale[:, None, :, None]).reshape(br * 128, bc * 128)[:rows, :cols]
    return codes.to(torch.float8_e4m3fn).contiguous(), scale


def save_compressed_tensors(
    model: torch.nn.Module, folder: Path, scheme: str | dict[str, list[str]]
) -> Path:
    """``model`` saved by compressed-tensors' own compressor under preset ``scheme``
    (``FP8_BLOCK``, ``FP8_DYNAMIC``, ``NVFP4``, ``MXFP4``, ...), its head ignored: the scheme
    applied to every linear, each weight's scale computed by the library's ``calculate_qparams``
    from the weight's min and max (per 128x128 block, per channel, per 1x32 group, per tensor,
    or NVFP4's global scale and then per 1x16, as the scheme says; what llm-compressor's min-max
    observer feeds it);
    static input scales (``FP8``; NVFP4's input global scale) likewise from each layer's input
    min and max over a batch of random token ids; then ``compress_model`` and
    ``save_pretrained``. ``scheme`` may map presets to their targets (a mixed-precision
    folder: one config group each)."""
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (
        QuantizationConfig,
        apply_quantization_config,
        preset_name_to_scheme,
    )
    from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam

    schemes = {scheme: ["Linear"]} if isinstance(scheme, str) else scheme
    config = QuantizationConfig(
        config_groups={
            f"group_{i}": preset_name_to_scheme(name, targets)
            for i, (name, targets) in enumerate(schemes.items())
        },
        ignore=["lm_head"],
    )
    ranges = _input_ranges(model)
    apply_quantization_config(model, config)
    for module in model.modules():
        args = getattr(getattr(module, "quantization_scheme", None), "weights", None)
        if args is None:
            continue
        w = module.weight.detach().float()
        if args.strategy == "tensor_group":  # NVFP4: a global scale, then E4M3 per 1x16
            global_scale = generate_gparam(w.amin(), w.amax())
            module.weight_global_scale.data.copy_(global_scale)
            groups = w.reshape(w.shape[0], -1, args.group_size)
            low, high = groups.amin(dim=-1), groups.amax(dim=-1)
            scale, _ = calculate_qparams(low, high, args, global_scale=global_scale)
            module.weight_scale.data.copy_(scale.reshape(module.weight_scale.shape))
            continue
        if args.block_structure is not None:
            (br, bc), (rows, cols) = args.block_structure, w.shape
            w = w.reshape(rows // br, br, cols // bc, bc)
            low, high = w.amin(dim=(1, 3)), w.amax(dim=(1, 3))
        elif args.strategy == "channel":
            low, high = w.amin(dim=1, keepdim=True), w.amax(dim=1, keepdim=True)
        elif args.strategy == "group":  # MXFP4, MXFP8: per 1x32, E8M0 exponents
            groups = w.reshape(w.shape[0], -1, args.group_size)
            low, high = groups.amin(dim=-1), groups.amax(dim=-1)
        else:
            low, high = w.amin().reshape(1), w.amax().reshape(1)
        scale, _ = calculate_qparams(low, high, args)
        module.weight_scale.data.copy_(scale.reshape(module.weight_scale.shape))
    for name, module in model.named_modules():
        args = getattr(getattr(module, "quantization_scheme", None), "input_activations", None)
        if args is not None and args.dynamic == "local":  # NVFP4: a static global scale
            low, high = ranges[name]
            module.input_global_scale.data.copy_(generate_gparam(low, high))
        elif args is not None and not args.dynamic:
            low, high = ranges[name]
            scale, _ = calculate_qparams(low.reshape(1), high.reshape(1), args)
            module.input_scale.data.copy_(scale.reshape(module.input_scale.shape))
    compressor = ModelCompressor.from_pretrained_model(model)
    compressor.compress_model(model)
    model.save_pretrained(str(folder))
    compressor.update_config(str(folder))
    return folder


def _input_ranges(model: torch.nn.Module) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Each linear's input min and max over one batch of random token ids (the model not yet
    quantized: the calibration a min-max observer does)."""
    seen: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def hook(name: str) -> Any:
        def record(module: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> None:
            x = args[0].detach().float()
            low, high = seen.get(name, (x.min(), x.max()))
            seen[name] = (torch.minimum(low, x.min()), torch.maximum(high, x.max()))

        return record

    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    handles = [m.register_forward_pre_hook(hook(n)) for n, m in linears]
    ids = torch.randint(
        0, model.config.vocab_size, (4, 16), generator=torch.Generator().manual_seed(9)
    )
    with torch.no_grad():
        model(input_ids=ids)
    for h in handles:
        h.remove()
    return seen


def save_modelopt(ct_folder: Path, folder: Path) -> Path:
    """A compressed-tensors folder of FP8 (per tensor, static) and NVFP4 layers rewritten as
    ModelOpt's export: FP8 layers keep their tensors (``weight``, ``weight_scale`` and
    ``input_scale`` multipliers, as scalars); NVFP4 layers by the inverse of
    compressed-tensors' own ``ModelOptNvfp4Converter`` (``weight_packed`` → ``weight`` U8,
    ``weight_global_scale`` → ``weight_scale_2 = 1 / it``, ``input_global_scale`` →
    ``input_scale = 1 / it``); ``hf_quant_config.json`` says ``FP8``, ``NVFP4`` or
    ``MIXED_PRECISION`` with each layer's ``quantized_layers`` entry, the ignored layers as
    ``exclude_modules``; config.json loses its quantization_config."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(ct_folder, folder)
    config = json.loads((folder / "config.json").read_text())
    quant = config.pop("quantization_config")
    (folder / "config.json").write_text(json.dumps(config))
    tensors = load_file(str(folder / "model.safetensors"))
    out: dict[str, torch.Tensor] = {}
    layers: dict[str, dict[str, Any]] = {}
    for name, t in tensors.items():
        module, _, param = name.rpartition(".")
        if param == "weight_packed":
            out[f"{module}.weight"] = t
            layers[module] = {"quant_algo": "NVFP4", "group_size": 16}
        elif param in ("weight_global_scale", "input_global_scale"):
            new = "weight_scale_2" if param == "weight_global_scale" else "input_scale"
            out[f"{module}.{new}"] = (1 / t.float()).reshape(())
        elif param in ("weight_scale", "input_scale") and t.dtype == torch.float32:
            out[name] = t.reshape(())  # FP8 per tensor: ModelOpt's scalars
        else:
            out[name] = t
            if param == "weight" and t.dtype == torch.float8_e4m3fn:
                layers[module] = {"quant_algo": "FP8"}
    (folder / "model.safetensors").unlink()
    save_file(out, str(folder / "model.safetensors"), metadata={"format": "pt"})
    algos = {layer["quant_algo"] for layer in layers.values()}
    quantization: dict[str, Any] = {
        "quant_algo": algos.pop() if len(algos) == 1 else "MIXED_PRECISION",
        "kv_cache_quant_algo": None,
        "exclude_modules": quant["ignore"],
    }
    if quantization["quant_algo"] == "NVFP4":
        quantization["group_size"] = 16
    if quantization["quant_algo"] == "MIXED_PRECISION":
        quantization["quantized_layers"] = layers
    hf_quant = {"producer": {"name": "modelopt", "version": "0.47.0"}, "quantization": quantization}
    (folder / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    return folder
