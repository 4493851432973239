"""Model folders: the one place where "what the user passed as a model" becomes a checked folder.

Framework neutral: it reads file names and ``config.json``, never weights. Training run folders
(``openmind_args.yaml`` inside) will resolve here too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmind.core.api import read_config
from openmind.core.api import resolve_model as resolve_model_id
from openmind.core.errors import A_MISSING
from openmind.nlp.errors import M_NO_TOKENIZER, M_NOT_A_MODEL, M_PICKLE

SAFE_WEIGHTS = ("*.safetensors",)
PICKLE_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.pkl")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.txt", "vocab.json", "spiece.model", "tokenizer.tiktoken")
#: task inferred from the end of an architecture name (first match wins)
ARCHITECTURE_TASKS = (
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForMaskedLM", "fill-mask"),
    ("ForCausalLM", "text-generation"),
    ("LMHeadModel", "text-generation"),
)


@dataclass(frozen=True)
class ModelFolder:
    path: str
    config: dict[str, Any]
    #: "safetensors" or "pickle"
    weights: str


def _glob_any(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    return [p for pattern in patterns for p in folder.glob(pattern) if not p.name.startswith("adapter_")]


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
    """Resolve ``model`` (local folder or hub id) and check it is a loadable model folder.

    Raises OM-A004 (no model), OM-M001 (not found), OM-M002 (not a model: no config.json or no
    weights), OM-M102 (only pickle weights and ``allow_pickle`` is off), OM-M101 (no tokenizer).
    """
    if model is None or str(model) == "":
        raise A_MISSING.error("no model given", hint="Pass model=PATH (SDK) or --model PATH (CLI).", location="model")
    path = Path(resolve_model_id(model, revision=revision, hub=hub))
    if path.is_file():
        raise M_NOT_A_MODEL.error(f"{str(path)!r} is a file, not a model folder", location=str(path))
    config_file = path / "config.json"
    if not config_file.is_file():
        hint = None
        if (path / "adapter_config.json").is_file():
            hint = "This is a LoRA adapter: pass the base model as model=... and this folder as adapter=..."
        raise M_NOT_A_MODEL.error(f"{str(path)!r} has no config.json", location=str(path), hint=hint)
    config = read_config(path)
    safe = _glob_any(path, SAFE_WEIGHTS)
    pickled = _glob_any(path, PICKLE_WEIGHTS)
    if safe:
        weights = "safetensors"
    elif pickled:
        if not allow_pickle:
            names = ", ".join(sorted(p.name for p in pickled)[:3])
            raise M_PICKLE.error(f"{str(path)!r} has only pickle weights ({names})", location=str(path))
        weights = "pickle"
    else:
        raise M_NOT_A_MODEL.error(
            f"{str(path)!r} has config.json but no weights (*.safetensors)", location=str(config_file)
        )
    if tokenizer is None and not has_tokenizer(path):
        raise M_NO_TOKENIZER.error(
            f"{str(path)!r} has no tokenizer files (looked for {', '.join(TOKENIZER_FILES)})",
            location=str(path),
            hint=M_NO_TOKENIZER.hint + " Or pass tokenizer=PATH.",
        )
    return ModelFolder(str(path), config, weights)


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
