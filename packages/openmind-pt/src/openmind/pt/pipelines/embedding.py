"""``text2emb`` on transformers: encoder hidden states, pooled and normalised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openmind.nlp.pipelines.base import EmbeddingParams, LoadOptions, Pipeline
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import dtype_name, load_model, load_tokenizer


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
            for key, mode in (
                ("pooling_mode_cls_token", "cls"),
                ("pooling_mode_mean_tokens", "mean"),
                ("pooling_mode_max_tokens", "max"),
                ("pooling_mode_lasttoken", "last"),
            ):
                if cfg.get(key):
                    return mode
    return None


class TorchEmbedding(Pipeline):
    framework = "pt"
    backend = "transformers"

    def __init__(self, model: Any, tokenizer: Any, *, model_dir: str, device: str, dtype: Any) -> None:
        self.task = "text2emb"
        self.model = model
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)
        self.default_pooling = sentence_transformers_pooling(model_dir) or "mean"
        limit = getattr(tokenizer, "model_max_length", None)
        positions = getattr(model.config, "max_position_embeddings", None)
        self.max_length = min(x for x in (limit, positions, 10**6) if isinstance(x, int) and x > 0)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchEmbedding:
        from transformers import AutoModel

        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        model, device, dtype = load_model(model_dir, AutoModel, options)
        return cls(model, tokenizer, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[str], params: EmbeddingParams) -> Any:
        features = self.tokenizer(
            inputs,
            padding=True,
            truncation=True,
            max_length=params.max_length or self.max_length,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in features.items()}

    def forward(self, features: Any, params: EmbeddingParams) -> Any:
        torch = import_torch()
        with torch.inference_mode():
            hidden = self.model(**features).last_hidden_state
        return hidden, features["attention_mask"]

    def postprocess(self, outputs: Any, params: EmbeddingParams) -> list[list[float]]:
        torch = import_torch()
        hidden, mask = outputs
        hidden = hidden.float()
        pooling = self.default_pooling if params.pooling == "auto" else params.pooling
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        if pooling == "mean":
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        elif pooling == "max":
            pooled = hidden.masked_fill(weights == 0, float("-inf")).max(1).values
        elif pooling == "cls":
            pooled = hidden[:, 0]
        else:  # last non-padding token (right padding)
            last = mask.sum(1) - 1
            pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        if params.normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=-1)
        return pooled.cpu().tolist()
