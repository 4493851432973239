"""The ``openmind1`` dialect: openMind 1.0's ``openmind-cli train`` / ``export`` YAML keys.

Every field of 1.0's ModelArguments / DatasetsArguments / FinetuneArguments
(:data:`~openmind.core.compat.reference_keys.OPENMIND1`) and of transformers'
``Seq2SeqTrainingArguments`` (which 1.0 parsed the same file into) is mapped, passed through to
the trainer, or reported. 1.0's defaults apply (``finetuning_type: full``, gradient
checkpointing on).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from openmind.core.compat.common import PASSTHROUGH, TRAINER_RULES, _truthy, drop_none, optimizer_problem
from openmind.core.compat.reference_keys import OPENMIND1
from openmind.core.dialects import Dialect, Ignore, Map, Unsupported

#: openMind 1.0's built-in dataset names (``openmind/flow/configs/dataset_info.json`` of the 1.0.0
#: wheel): Modelers dataset repositories, pulled on demand through the hub layer when a 1.0
#: configuration names them (``dataset: alpaca_zh_51k``).
BUILTIN_DATASETS: dict[str, dict[str, str]] = {
    "alpaca_zh_51k": {"hub_url": "AI-Research/alpaca_zh_51k"},
    "alpaca": {"hub_url": "AI_Connect/alpaca"},
    "alpaca-gpt4-data": {"hub_url": "AI_Connect/alpaca-gpt4-data"},
    "alpaca-gpt4-data-zh": {"hub_url": "AI_Connect/alpaca-gpt4-data-zh"},
    "sharegpt_gpt4": {"hub_url": "AI-Research/sharegpt_gpt4", "formatting": "sharegpt"},
}
#: the generated dataset_info folders (under the openmind cache) start with this
_INFO_PREFIX = "dataset_info-"


def _convert_entries(entries: Any, base: Path, where: str) -> dict[str, Any]:
    """1.0 entries (``local_path`` [+ ``file_name``] | ``hub_url``, ``formatting``, ``columns``,
    ``subset``, ``split``, ``folder``, ``num_samples``) in the LLaMA-Factory layout the data engine
    reads (an absolute ``file_name``; ``hub_url`` -> ``om_hub_url``)."""
    if not isinstance(entries, dict):
        raise ValueError(f"{where} must hold a JSON object of dataset entries")
    converted: dict[str, Any] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise ValueError(f"entry {name!r} must be an object")
        out = {k: v for k, v in entry.items() if k not in ("local_path", "hub_url", "file_name", "num_samples")}
        if "hub_url" in entry:
            out["om_hub_url"] = entry["hub_url"]
        elif "local_path" in entry or "file_name" in entry:
            local = Path(os.path.expanduser(str(entry.get("local_path", "."))))
            local = local if local.is_absolute() else base / local
            out["file_name"] = str(local / entry["file_name"]) if entry.get("file_name") else str(local)
        else:
            raise ValueError(f"entry {name!r} has neither local_path nor hub_url (1.0) nor file_name")
        if "num_samples" in entry:
            out["num_samples"] = entry["num_samples"]
        converted[name] = out
    return converted


def _write_info(converted: dict[str, Any]) -> str:
    """A ``dataset_info.json`` of ``converted`` entries in a folder of the openmind cache (by content)."""
    from openmind.core.paths import cache_root

    text = json.dumps(converted, indent=2, ensure_ascii=False, sort_keys=True)
    folder = cache_root() / "compat" / f"{_INFO_PREFIX}{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataset_info.json").write_text(text, encoding="utf-8")
    return str(folder)


def _dataset_info(value: Any) -> dict[str, Any]:
    """1.0's ``custom_dataset_info`` (JSON files, comma-separated, of ``name: {local_path | hub_url,
    file_name, ...}``; later files win) -> ``dataset_dir`` holding the same entries in the
    LLaMA-Factory layout the data engine reads."""
    if value is None:
        return {}
    converted: dict[str, Any] = {}
    paths = value if isinstance(value, (list, tuple)) else str(value).split(",")
    for item in paths:
        path = Path(os.path.expanduser(str(item).strip()))
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read {str(path)!r}: {exc}") from None
        converted.update(_convert_entries(entries, path.parent.resolve(), repr(str(path))))
    return {"dataset_dir": _write_info(converted)}


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    if isinstance(value, (list, tuple)):
        return [str(n).strip() for n in value]
    return []


def _finalize(values: dict[str, Any]) -> dict[str, Any]:
    """1.0's built-in dataset names resolve as in 1.0: its built-in entries under the user's
    ``custom_dataset_info`` ones (1.0: ``dataset_info.update(custom)``), in a generated
    ``dataset_dir``. A ``dataset_dir`` the user chose (openmind's key) is left alone."""
    used = [n for n in _names(values.get("dataset")) if n in BUILTIN_DATASETS]
    if not used:
        return values
    current = values.get("dataset_dir")
    custom: dict[str, Any] = {}
    if current is not None:
        folder = Path(str(current))
        if not folder.name.startswith(_INFO_PREFIX):
            return values
        custom = json.loads((folder / "dataset_info.json").read_text(encoding="utf-8"))
    missing = [n for n in used if n not in custom]
    if missing:
        builtins = _convert_entries({n: BUILTIN_DATASETS[n] for n in missing}, Path.cwd(), "1.0's dataset_info")
        values["dataset_dir"] = _write_info({**builtins, **custom})
    return values


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
        None, _dataset_info, "1.0 entries (local_path, hub_url) rewritten to the LLaMA-Factory layout -> dataset_dir"
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
    finalize=_finalize,
    check_passthrough=optimizer_problem,
)
