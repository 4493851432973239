"""Loading a model folder for a MindSpore pipeline, with openmind's security defaults.

Only safetensors are read (pickle is refused with OM-M102, even with ``allow_pickle``: the native
loader has no pickle reader); ``trust_remote_code`` models are refused (OM-M105); the tokenizer is
transformers' (tokenizers need no framework).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openmind.core.api import read_config  # noqa: F401 - re-exported for the backends
from openmind.core.pipelines.base import LoadOptions
from openmind.core.pipelines.model import PICKLE_WEIGHTS, SAFE_WEIGHTS
from openmind.nlp.errors import M_NO_TOKENIZER, M_PICKLE, M_REMOTE_CODE, M_WRONG_HEAD

#: task -> the native head that serves it, and the architecture suffixes that carry it
TASK_HEADS = {
    "chat": ("causal-lm", ("ForCausalLM",)),
    "text-generation": ("causal-lm", ("ForCausalLM",)),
    "summarization": ("causal-lm", ("ForCausalLM",)),
    "translation": ("causal-lm", ("ForCausalLM",)),
    "text-classification": ("sequence-classification", ("ForSequenceClassification",)),
    "text2emb": ("encoder", ()),
    "feature-extraction": ("encoder", ()),
    "fill-mask": ("masked-lm", ("ForMaskedLM",)),
}


def check_folder(model_dir: str, options: LoadOptions) -> dict[str, Any]:
    """config.json checked for the task's head, weights checked for safetensors."""
    config = read_config(model_dir)
    head, suffixes = TASK_HEADS[options.task]
    archs = config.get("architectures") or []
    if suffixes and archs and not any(a.endswith(s) for a in archs for s in suffixes):
        raise M_WRONG_HEAD.error(
            f"{model_dir!r} is a {', '.join(archs)}, which has no {options.task} head (needs *{' or *'.join(suffixes)})",
            location=os.path.join(model_dir, "config.json"),
        )
    if config.get("auto_map") and not options.trust_remote_code:
        raise M_REMOTE_CODE.error(f"{model_dir!r} declares its own code (auto_map)", location=model_dir)
    folder = Path(model_dir)
    if not any(folder.glob(p) for p in SAFE_WEIGHTS) and any(any(folder.glob(p)) for p in PICKLE_WEIGHTS):
        raise M_PICKLE.error(
            f"{model_dir!r} has only pickle weights; the MindSpore backend reads safetensors only",
            location=model_dir,
            hint="Convert the weights to safetensors (allow_pickle=True works on framework='pt' only).",
        )
    return config


def load_tokenizer(model_dir: str, options: LoadOptions, *, padding_side: str = "right") -> Any:
    from transformers import AutoTokenizer

    source = options.tokenizer or model_dir
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=options.trust_remote_code)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise M_NO_TOKENIZER.error(
            f"cannot load a tokenizer from {source!r}: {type(exc).__name__}: {first}", location=source
        ) from exc
    tokenizer.padding_side = padding_side
    return tokenizer


def generation_defaults(model_dir: str) -> dict[str, Any]:
    path = Path(model_dir) / "generation_config.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto`` is float32 on CPU and float16 on Ascend/GPU (MindSpore's fast path there)."""
    if dtype in (None, "", "auto"):
        return "float32" if device == "CPU" else "float16"
    return str(dtype).replace("torch.", "")
