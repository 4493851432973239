"""Pick the native model class from ``config.json`` and load / save its safetensors weights."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from openmind.core.logs import logger
from openmind.ms.errors import MS_CHECKPOINT, MS_UNSUPPORTED_MODEL
from openmind.ms.models import bert, llama
from openmind.ms.models.config import BERT_FAMILY, LLAMA_FAMILY, BertConfig, LlamaConfig, read_config
from openmind.ms.models.weights import load_state_dict, save_state_dict

#: "head" a task needs -> the class per family
HEADS = {
    ("llama", "causal-lm"): llama.LlamaForCausalLM,
    ("llama", "sequence-classification"): llama.LlamaForSequenceClassification,
    ("bert", "encoder"): bert.BertModel,
    ("bert", "sequence-classification"): bert.BertForSequenceClassification,
    ("bert", "masked-lm"): bert.BertForMaskedLM,
}
#: checkpoint tensors that are buffers, not parameters
_BUFFERS = ("embeddings.position_ids", "rotary_emb.inv_freq", "embeddings.token_type_ids")
DTYPES = {"float32": ms.float32, "float16": ms.float16, "bfloat16": ms.bfloat16}


def family(cfg: dict[str, Any], location: str = "config.json") -> str:
    model_type = cfg.get("model_type")
    if model_type in LLAMA_FAMILY:
        return "llama"
    if model_type in BERT_FAMILY:
        return "bert"
    archs = ", ".join(cfg.get("architectures") or []) or "none"
    raise MS_UNSUPPORTED_MODEL.error(
        f"model_type {model_type!r} (architectures: {archs}) has no native MindSpore implementation", location=location
    )


def build(cfg: dict[str, Any], head: str, *, seed: int = 0, location: str = "config.json") -> nn.Cell:
    fam = family(cfg, location)
    cls = HEADS.get((fam, head))
    if cls is None:
        raise MS_UNSUPPORTED_MODEL.error(f"no native {head} head for the {fam} family", location=location)
    typed = (LlamaConfig if fam == "llama" else BertConfig).from_dict(cfg, location)
    return cls(typed, seed=seed)


def _rename(state: dict[str, np.ndarray], names: set[str]) -> dict[str, np.ndarray]:
    """Bridge the prefix differences between a checkpoint and a head (``bert.``, ``model.``)."""
    out: dict[str, np.ndarray] = {}
    for key, value in state.items():
        if key in names:
            out[key] = value
            continue
        for old, new in (("bert.", ""), ("", "bert."), ("model.", ""), ("", "model.")):
            if key.startswith(old) and (new + key[len(old) :]) in names:
                out[new + key[len(old) :]] = value
                break
        else:
            out[key] = value
    return out


def load_weights(model: nn.Cell, state: dict[str, np.ndarray], *, location: str, strict: bool = True) -> list[str]:
    """Copy ``state`` into ``model``'s parameters; returns the names of parameters left as initialised."""
    params = dict(model.parameters_and_names())
    state = _rename(state, set(params))
    unexpected = [
        k
        for k in state
        if k not in params
        and not k.endswith(_BUFFERS)
        and not k.startswith(("pooler.", "bert.pooler"))
        # transformers' BERT masked-LM head: decoder.bias is cls.predictions.bias (one tensor saved twice)
        and k != "cls.predictions.decoder.bias"
    ]
    missing = [k for k in params if k not in state]
    if strict and missing:
        heads = [k for k in missing if k.startswith(("score.", "classifier.", "pooler.", "bert.pooler."))]
        real = [k for k in missing if k not in heads]
        if real:
            raise MS_CHECKPOINT.error(
                f"{len(real)} tensors missing from the checkpoint, e.g. {', '.join(real[:3])}", location=location
            )
        if heads:
            logger.warning("initialised freshly (not in the checkpoint): %s", ", ".join(heads))
    if unexpected:
        raise MS_CHECKPOINT.error(
            f"{len(unexpected)} checkpoint tensors have no place in the {type(model).__name__} model, "
            f"e.g. {', '.join(unexpected[:3])}",
            location=location,
        )
    for name, value in state.items():
        param = params.get(name)
        if param is None:
            continue
        if tuple(param.shape) != tuple(value.shape):
            raise MS_CHECKPOINT.error(
                f"tensor {name!r} has shape {tuple(value.shape)} in the checkpoint, the config implies "
                f"{tuple(param.shape)}",
                location=location,
            )
        param.set_data(Tensor(np.ascontiguousarray(value), dtype=param.dtype))
    return missing


def load(
    model_dir: str | os.PathLike, head: str, *, dtype: str = "float32", seed: int = 0
) -> tuple[nn.Cell, dict[str, Any]]:
    """Build the ``head`` model of ``model_dir`` and load its safetensors weights."""
    cfg = read_config(model_dir)
    location = str(Path(model_dir) / "config.json")
    model = build(cfg, head, seed=seed, location=location)
    load_weights(model, load_state_dict(model_dir), location=str(model_dir))
    if dtype not in ("auto", "float32"):
        cast(model, dtype)
    model.set_train(False)
    return model, cfg


def cast(model: nn.Cell, dtype: str) -> None:
    target = DTYPES[dtype]
    for param in model.get_parameters():
        if param.dtype != target:
            param.set_data(param.data.astype(target))


def state_dict(model: nn.Cell, *, dtype: str = "float32", include=None) -> dict[str, np.ndarray]:
    """Parameters as numpy arrays under their Hugging Face names (LoRA tensors excluded)."""
    out = {}
    for name, param in model.parameters_and_names():
        if ".lora_" in name or (include is not None and not include(name)):
            continue
        value = param.data.astype(ms.float32).asnumpy()
        out[name] = value.astype(np.float16) if dtype == "float16" else value
    return out


def save_pretrained(
    model: nn.Cell, cfg: dict[str, Any], folder: str | os.PathLike, *, source: str | os.PathLike | None = None
) -> Path:
    """Write config.json + safetensors (+ the tokenizer and template files of ``source``)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_state_dict(state_dict(model), folder)
    out_cfg = dict(cfg)
    out_cfg["dtype"] = "float32"
    out_cfg.pop("torch_dtype", None)
    (folder / "config.json").write_text(json.dumps(out_cfg, indent=2) + "\n", encoding="utf-8")
    if source is not None:
        copy_assets(source, folder)
    return folder


#: files besides the weights that make a model folder usable (tokenizer, template, generation defaults)
ASSET_PATTERNS = (
    "tokenizer*",
    "special_tokens_map.json",
    "chat_template.jinja",
    "generation_config.json",
    "vocab.*",
    "merges.txt",
    "*.model",
    "added_tokens.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling",
)


def copy_assets(source: str | os.PathLike, folder: str | os.PathLike) -> None:
    source, folder = Path(source), Path(folder)
    if source.resolve() == folder.resolve():
        return
    for pattern in ASSET_PATTERNS:
        for path in source.glob(pattern):
            target = folder / path.name
            if path.is_dir():
                shutil.copytree(path, target, dirs_exist_ok=True)
            elif path.is_file():
                shutil.copy2(path, target)
