"""``text2emb`` on transformers: encoder hidden states, pooled and normalised."""

from __future__ import annotations

from typing import Any

from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.nlp.pipelines.base import EmbeddingParams
from openmind.nlp.pipelines.pooling import embedding_max_length, sentence_transformers_pooling
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import dtype_name, load_model, load_tokenizer


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
        self.max_length = embedding_max_length(tokenizer, getattr(model.config, "max_position_embeddings", None))

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
