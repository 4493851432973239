"""The ``llamafactory`` dialect: LLaMA-Factory 0.9.5's YAML keys on openmind's arguments.

Every key of LLaMA-Factory's model / data / finetuning / generating / training argument classes
(:data:`~openmind.core.compat.reference_keys.LLAMAFACTORY`) and of transformers'
``TrainingArguments`` is mapped, passed through to the trainer, or reported (harmless at
LLaMA-Factory's default). Its defaults that differ from openmind's apply when the dialect is used
(``dataset_dir: data``, ``cutoff_len: 2048``, gradient checkpointing on, ...).
"""

from __future__ import annotations

from typing import Any

from openmind.core.compat.common import PASSTHROUGH, TRAINER_RULES, _truthy, drop_none, optimizer_problem
from openmind.core.compat.reference_keys import LLAMAFACTORY
from openmind.core.dialects import Dialect, Ignore, Map, Unsupported


def _one_adapter(value: Any) -> Any:
    if isinstance(value, str) and "," in value:
        raise ValueError("openmind applies one adapter; merge the others first (`openmind export`)")
    return value


def _qlora(value: Any) -> dict[str, Any]:
    return {} if value in (None, 0) else {"quantization_bit": value, "finetuning_type": "qlora"}


def _finetuning_type(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() == "oft":
        raise ValueError(
            "OFT is not in openmind; use finetuning_type lora (or full, freeze, qlora) and remove the oft_* keys"
        )
    return value


def _finalize(values: dict[str, Any]) -> dict[str, Any]:
    # LLaMA-Factory: quantization_bit + finetuning_type lora is QLoRA (openmind names it qlora)
    if values.get("quantization_bit") and values.get("finetuning_type", "lora") == "lora":
        values["finetuning_type"] = "qlora"
    return values


_GALORE = (
    "openmind has no GaLore switch; transformers' GaLore optimizer runs through the trainer: "
    "`optim: galore_adamw` with `optim_target_modules: [...]` (pip install galore-torch), without the use_galore/galore_* keys"
)
_APOLLO = (
    "openmind has no APOLLO switch; transformers' APOLLO optimizer runs through the trainer: "
    "`optim: apollo_adamw` with `optim_target_modules: [...]` (pip install apollo-torch), without the use_apollo/apollo_* keys"
)
_NO_OPTIMIZER = "is LLaMA-Factory's own optimizer, which openmind does not have; remove the {keys} keys (AdamW is used)"
_NO_LOSS = "is a LLaMA-Factory loss openmind does not have; remove the key (sft trains with cross-entropy)"


def _family(instead: str, *prefixes: str) -> dict[str, Unsupported]:
    """Every LLaMA-Factory key starting with one of ``prefixes``: reported (with ``instead``) unless at
    LLaMA-Factory's default."""
    return {k: Unsupported(instead, default) for k, (_, default) in LLAMAFACTORY.items() if k.startswith(prefixes)}


#: LLaMA-Factory's methods openmind does not have: each key of a method -> what to do instead.
METHODS: dict[str, Unsupported] = {
    **_family(_GALORE, "use_galore", "galore_"),
    **_family(_APOLLO, "use_apollo", "apollo_"),
    **_family("BAdam " + _NO_OPTIMIZER.format(keys="use_badam/badam_*"), "use_badam", "badam_"),
    **_family("Adam-mini " + _NO_OPTIMIZER.format(keys="use_adam_mini"), "use_adam_mini"),
    **_family("Muon " + _NO_OPTIMIZER.format(keys="use_muon"), "use_muon"),
    **_family("DFT " + _NO_LOSS, "use_dft_loss"),
    **_family("ASFT " + _NO_LOSS, "use_asft_loss", "asft_"),
    **_family("EAFT " + _NO_LOSS, "use_eaft_loss", "eaft_"),
    **_family(
        "LLaMA Pro's block expansion is not in openmind; `finetuning_type: freeze` with "
        "`freeze_trainable_layers` trains the last layers only",
        "use_llama_pro",
    ),
    **_family("mixture-of-depths conversion is not in openmind; remove the key", "mixture_of_depths"),
    **_family(
        "LoRA+ (a separate learning rate for LoRA's B matrices) is not in openmind; remove the key (plain LoRA)",
        "loraplus_",
    ),
    **_family("PiSSA initialisation is not in openmind; remove the pissa_* keys (LoRA's default init)", "pissa_"),
    **_family(
        "openmind trains with fp32 master weights; use `bf16: true` (mixed precision) or `dtype: bfloat16`",
        "pure_bf16",
    ),
    **_family("FP8 training is not in openmind (it needs FP8-capable GPUs); remove the fp8* keys", "fp8"),
    **_family(
        "openmind does not launch through Ray; `openmind train --nproc N [--nnodes M]` starts torchrun",
        "use_ray",
        "ray_",
    ),
    **_family("openmind's QLoRA always uses bitsandbytes' double quantisation; remove the key", "double_quantization"),
    **_family(
        "openmind exports unquantised safetensors (no GPTQ export); remove the export_quantization_* keys and "
        "quantise the exported folder with a GPTQ tool",
        "export_quantization_",
    ),
    **_family(
        "openmind fine-tunes with full, freeze, lora or qlora; OFT is not in openmind (use finetuning_type: lora)",
        "oft_",
    ),
}

RULES = {
    **TRAINER_RULES,
    **METHODS,
    # model
    "model_name_or_path": Map("model"),
    "finetuning_type": Map("finetuning_type", _finetuning_type),
    "adapter_name_or_path": Map("adapter", _one_adapter),
    "model_revision": Map("revision"),
    "disable_gradient_checkpointing": Map(None, lambda v: {"gradient_checkpointing": not _truthy(v)}),
    "hf_hub_token": Unsupported("set HF_TOKEN in the environment (or `openmind pull --token`)", None),
    "ms_hub_token": Unsupported("set MODELSCOPE_API_TOKEN in the environment", None),
    "om_hub_token": Unsupported("set OPENMIND_HUB_TOKEN in the environment", None),
    "flash_attn": Unsupported("openmind picks the attention implementation (sdpa where available)", "auto"),
    "infer_backend": Unsupported("`openmind deploy --backend` chooses the serving backend", "huggingface"),
    "quantization_method": Unsupported("openmind quantises with bitsandbytes only", "bnb"),
    "quantization_bit": Map(None, _qlora, "LLaMA-Factory's QLoRA is openmind's finetuning_type qlora"),
    "infer_dtype": Unsupported("pass --dtype to chat/run/deploy", "auto"),
    # data
    "preprocessing_num_workers": drop_none("preprocessing_num_workers"),
    "packing": Map(None, lambda v: {} if v is None else {"packing": _truthy(v)}),
    "train_on_prompt": Map(None, lambda v: {"train_on": "all"} if _truthy(v) else {}),
    "mask_history": Map(None, lambda v: {"train_on": "last"} if _truthy(v) else {}),
    "default_system": Map("system"),
    "tokenized_path": Unsupported(
        "openmind caches prepared data by content on its own (data_cache_dir); `openmind data prepare CONFIG` "
        "prepares it ahead of training",
        None,
    ),
    # an FSDP setting older transformers took at the top level (LLaMA-Factory's fp8/fsdp example)
    "fsdp_transformer_layer_cls_to_wrap": Unsupported(
        "put it in fsdp_config (`fsdp_config: {transformer_layer_cls_to_wrap: [...]}`), or use openmind's "
        "`--fsdp` with its own wrapping",
        None,
    ),
    "max_samples": drop_none("max_samples"),
    # finetuning
    "plot_loss": Map("plot_loss"),
    # generating (chat / run YAML files)
    "max_length": Unsupported("pass max_new_tokens", 1024),
    # multimodal: images train (openmind-mm's multimodal arguments have LLaMA-Factory's image_* names);
    # videos and audios do not yet: a row with them is refused with OM-D015, so their settings do nothing
    **{
        k: Ignore("openmind trains on images only; rows with videos/audios are refused (OM-D015)")
        for k in LLAMAFACTORY
        if k.startswith(("video_", "audio_", "use_audio_in_video"))
    },
    # export (merge_lora examples)
    "export_dir": Map("out"),
    "export_size": Map(
        None, lambda v: {} if v is None else {"max_shard_size": f"{int(v)}GB"}, "max_shard_size: '<N>GB'"
    ),
    "export_hub_model_id": Map("push"),
    "export_device": Ignore("openmind merges on the CPU"),
    "export_legacy_format": Unsupported("openmind exports safetensors only", False),
}

DIALECT = Dialect(
    name="llamafactory",
    title="LLaMA-Factory",
    rules=RULES,
    reference={k: v[1] for k, v in LLAMAFACTORY.items()},
    passthrough=PASSTHROUGH,
    defaults={
        "dataset_dir": "data",
        "cutoff_len": 2048,
        "truncation": "proportional",
        "neat_packing": False,
        "plot_loss": False,
        "gradient_checkpointing": True,
        "lr_scheduler_type": "linear",
        "per_device_train_batch_size": 8,
        "logging_steps": 500,
        "report_to": ["none"],
    },
    unsupported_hint="openmind has no equivalent of this LLaMA-Factory option; remove the key",
    finalize=_finalize,
    check_passthrough=optimizer_problem,
)
