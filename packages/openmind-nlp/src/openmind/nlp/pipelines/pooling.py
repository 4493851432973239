"""Framework-neutral facts of a ``text2emb`` model folder, shared by every backend's pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: sentence-transformers' pooling flags and the ``EmbeddingParams.pooling`` mode each one means
POOLING_FLAGS = (
    ("pooling_mode_cls_token", "cls"),
    ("pooling_mode_mean_tokens", "mean"),
    ("pooling_mode_max_tokens", "max"),
    ("pooling_mode_lasttoken", "last"),
)


def sentence_transformers_pooling(model_dir: str) -> str | None:
    """The pooling mode a sentence-transformers folder declares (``1_Pooling/config.json``)."""
    folder = Path(model_dir)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for module in modules:
        if str(module.get("type", "")).endswith("Pooling"):
            try:
                cfg = json.loads((folder / module.get("path", "") / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            for key, mode in POOLING_FLAGS:
                if cfg.get(key):
                    return mode
    return None


def embedding_max_length(tokenizer: Any, max_position_embeddings: Any) -> int:
    """Longest input in tokens: the tokenizer's ``model_max_length`` and the model's positions,
    whichever is smaller (tokenizers without a limit say 1e30)."""
    limit = getattr(tokenizer, "model_max_length", None)
    return min(x for x in (limit, max_position_embeddings, 10**6) if isinstance(x, int) and x > 0)
