"""NLP model folders: the generic check of :mod:`openmind.core.pipelines.model` plus a tokenizer,
and the task inferred from a folder. Framework neutral: reads file names and ``config.json``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from openmind.core.pipelines.model import PICKLE_WEIGHTS, SAFE_WEIGHTS, ModelFolder
from openmind.core.pipelines.model import resolve_model_dir as resolve_core
from openmind.nlp.errors import M_NO_TOKENIZER

__all__ = [
    "PICKLE_WEIGHTS",
    "SAFE_WEIGHTS",
    "TOKENIZER_FILES",
    "ModelFolder",
    "has_chat_template",
    "has_tokenizer",
    "infer_task",
    "resolve_model_dir",
]

TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.txt", "vocab.json", "spiece.model", "tokenizer.tiktoken")
#: task inferred from the end of an architecture name (first match wins)
ARCHITECTURE_TASKS = (
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForMaskedLM", "fill-mask"),
    ("ForCausalLM", "text-generation"),
    ("LMHeadModel", "text-generation"),
)


def has_chat_template(folder: str | os.PathLike) -> bool:
    folder = Path(folder)
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        return True
    try:
        import json

        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(cfg.get("chat_template"))


def has_tokenizer(folder: str | os.PathLike) -> bool:
    folder = Path(folder)
    return any((folder / name).is_file() for name in TOKENIZER_FILES)


def resolve_model_dir(
    model: str | os.PathLike | None,
    *,
    allow_pickle: bool = False,
    tokenizer: str | os.PathLike | None = None,
    revision: str | None = None,
    hub: str | None = None,
) -> ModelFolder:
    """Resolve ``model`` (local folder or hub id) and check it is a model folder with a tokenizer.

    The generic check is :func:`openmind.core.pipelines.model.resolve_model_dir` (OM-A004, OM-M001,
    OM-M002, OM-M102); NLP adds OM-M101 (no tokenizer, and no ``tokenizer`` folder given).
    """
    folder = resolve_core(model, allow_pickle=allow_pickle, revision=revision, hub=hub)
    if tokenizer is None and not has_tokenizer(folder.path):
        raise M_NO_TOKENIZER.error(
            f"{folder.path!r} has no tokenizer files (looked for {', '.join(TOKENIZER_FILES)})",
            location=folder.path,
            hint=M_NO_TOKENIZER.hint + " Or pass tokenizer=PATH.",
        )
    return folder


def infer_task(model_dir: str | os.PathLike, config: dict[str, Any]) -> str | None:
    """The inference task a model folder is for, from ``config.json`` and its files.

    Causal LMs are ``chat`` when their tokenizer has a chat template, else ``text-generation``;
    sentence-transformers folders and bare encoders (``BertModel`` ...) are ``text2emb``.
    """
    folder = Path(model_dir)
    if (folder / "modules.json").is_file() or (folder / "config_sentence_transformers.json").is_file():
        return "text2emb"
    for arch in config.get("architectures") or []:
        for suffix, task in ARCHITECTURE_TASKS:
            if arch.endswith(suffix):
                if task == "text-generation" and has_chat_template(folder):
                    return "chat"
                return task
        if arch.endswith("Model"):
            return "text2emb"
    return None
