"""The ``openmind1`` dialect: openMind 1.0's ``openmind-cli train`` / ``export`` YAML keys.

Every field of 1.0's ModelArguments / DatasetsArguments / FinetuneArguments
(:data:`~openmind.core.compat.reference_keys.OPENMIND1`) and of transformers'
``Seq2SeqTrainingArguments`` (which 1.0 parsed the same file into) is mapped, passed through to
the trainer, or reported. 1.0's defaults apply (``finetuning_type: full``, gradient
checkpointing on).
"""

from __future__ import annotations

import os
from typing import Any

from openmind.core.compat.common import PASSTHROUGH, TRAINER_RULES, _truthy, drop_none
from openmind.core.compat.reference_keys import OPENMIND1
from openmind.core.dialects import Dialect, Ignore, Map, Unsupported


def _dataset_info(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    path = str(value)
    name = os.path.basename(path)
    if name in ("dataset_info.json", "dataset_info.yaml", "dataset_info.yml") or name.endswith(
        (".dataset.json", ".dataset.yaml", ".dataset.yml")
    ):
        return {"dataset_dir": os.path.dirname(path) or "."}
    raise ValueError(
        f"openmind reads dataset registries from a folder: rename {name!r} to dataset_info.json "
        "(or NAME.dataset.json) and set dataset_dir to its folder"
    )


def _one_adapter(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError("openmind applies one adapter; merge the others first (`openmind export`)")
        return value[0]
    if isinstance(value, str) and "," in value:
        raise ValueError("openmind applies one adapter; merge the others first (`openmind export`)")
    return value


RULES = {
    **TRAINER_RULES,
    # model
    "model_id": Unsupported(
        "1.0's built-in model ids are not kept: write `model: ORG/NAME` (a hub id, e.g. om::PyTorch-NPU/qwen2_7b) "
        "or a local folder",
        None,
    ),
    "model_name_or_path": Map("model"),
    "model_revision": Map("revision"),
    "load_in_4bit": Map(
        None,
        lambda v: {"finetuning_type": "qlora", "quantization_bit": 4} if _truthy(v) else {},
        "1.0's QLoRA is openmind's finetuning_type qlora",
    ),
    "use_gradient_checkpointing": Map("gradient_checkpointing"),
    "adapter_models": Map("adapter", _one_adapter),
    "per_shard_size": Map(
        None, lambda v: {} if v is None else {"max_shard_size": f"{int(v)}GB"}, "max_shard_size: '<N>GB'"
    ),
    "token": Unsupported("set OPENMIND_HUB_TOKEN in the environment (or `openmind pull --token`)", None),
    # data
    "custom_dataset_info": Map(
        None, _dataset_info, "its folder becomes dataset_dir (the file must be named dataset_info.json)"
    ),
    "subset_name": Unsupported("name a dataset_info entry with a `subset` (LLaMA-Factory layout)", None),
    "split": Unsupported("name a dataset_info entry with a `split`", "train"),
    "preprocessing_num_workers": drop_none("preprocessing_num_workers"),
    "max_length": Ignore("1.0 padded every sample to max_length; openmind pads each batch to its longest sample"),
    # finetuning
    "lora_target_modules": Map("lora_target"),
    # export: 1.0 wrote the merged model to output_dir
    "output_dir": Map("output_dir", alternatives=("out",)),
}

DIALECT = Dialect(
    name="openmind1",
    title="openMind 1.0",
    rules=RULES,
    reference={k: v[1] for k, v in OPENMIND1.items()},
    passthrough=PASSTHROUGH,
    defaults={
        "finetuning_type": "full",
        "gradient_checkpointing": True,
        "lr_scheduler_type": "linear",
        "per_device_train_batch_size": 8,
        "logging_steps": 500,
        "plot_loss": False,
    },
    unsupported_hint="openmind has no equivalent of this openMind 1.0 option; remove the key",
)
