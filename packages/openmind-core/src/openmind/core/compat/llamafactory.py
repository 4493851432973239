"""The ``llamafactory`` dialect: LLaMA-Factory 0.9.5's YAML keys on openmind's arguments.

Every key of LLaMA-Factory's model / data / finetuning / generating / training argument classes
(:data:`~openmind.core.compat.reference_keys.LLAMAFACTORY`) and of transformers'
``TrainingArguments`` is mapped, passed through to the trainer, or reported (harmless at
LLaMA-Factory's default). Its defaults that differ from openmind's apply when the dialect is used
(``dataset_dir: data``, ``cutoff_len: 2048``, gradient checkpointing on, ...).
"""

from __future__ import annotations

from typing import Any

from openmind.core.compat.common import PASSTHROUGH, TRAINER_RULES, _truthy, drop_none
from openmind.core.compat.reference_keys import LLAMAFACTORY
from openmind.core.dialects import Dialect, Ignore, Map, Unsupported


def _one_adapter(value: Any) -> Any:
    if isinstance(value, str) and "," in value:
        raise ValueError("openmind applies one adapter; merge the others first (`openmind export`)")
    return value


def _qlora(value: Any) -> dict[str, Any]:
    return {} if value in (None, 0) else {"quantization_bit": value, "finetuning_type": "qlora"}


def _finalize(values: dict[str, Any]) -> dict[str, Any]:
    # LLaMA-Factory: quantization_bit + finetuning_type lora is QLoRA (openmind names it qlora)
    if values.get("quantization_bit") and values.get("finetuning_type", "lora") == "lora":
        values["finetuning_type"] = "qlora"
    return values


RULES = {
    **TRAINER_RULES,
    # model
    "model_name_or_path": Map("model"),
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
    "tokenized_path": Unsupported("openmind caches prepared data by content on its own (data_cache_dir)", None),
    "max_samples": drop_none("max_samples"),
    # finetuning
    "plot_loss": Map("plot_loss"),
    # generating (chat / run YAML files)
    "max_length": Unsupported("pass max_new_tokens", 1024),
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
)
