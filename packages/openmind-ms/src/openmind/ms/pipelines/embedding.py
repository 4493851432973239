"""``text2emb`` on MindSpore: the native BERT encoder, pooled and normalised."""

from __future__ import annotations

from typing import Any

import numpy as np

from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.ms import runtime
from openmind.ms.pipelines.loading import check_folder, load_tokenizer, resolve_dtype
from openmind.nlp.pipelines.base import EmbeddingParams
from openmind.nlp.pipelines.pooling import embedding_max_length, sentence_transformers_pooling


class MindSporeEmbedding(Pipeline):
    framework = "ms"
    backend = "native"
    #: inputs are padded to a multiple of this many tokens (compiled graphs are reused)
    length_step = 16

    def __init__(self, model: Any, tokenizer: Any, *, model_dir: str, device: str, dtype: str) -> None:
        import mindspore as ms

        self.task = "text2emb"
        self.model = model
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype
        self.default_pooling = sentence_transformers_pooling(model_dir) or "mean"
        self.max_length = embedding_max_length(tokenizer, model.config.max_position_embeddings)

        def encode(ids, types, positions, mask):
            return model(ids, types, positions, mask)

        self._forward = ms.jit(encode)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> MindSporeEmbedding:
        check_folder(model_dir, options)
        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        device = runtime.set_device(options.device)
        dtype = resolve_dtype(options.dtype, "CPU")
        from openmind.ms.models import auto

        model, _ = auto.load(model_dir, "encoder", dtype=dtype)
        return cls(model, tokenizer, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[str], params: EmbeddingParams) -> dict[str, np.ndarray]:
        features = self.tokenizer(
            inputs, padding=False, truncation=True, max_length=params.max_length or self.max_length
        )
        return self.pad(features, self.max_length)

    def pad(self, features: Any, limit: int) -> dict[str, np.ndarray]:
        """Right-pad the tokenized rows to a multiple of :attr:`length_step` (at most ``limit``)."""
        rows = features["input_ids"]
        width = min(-(-max(len(r) for r in rows) // self.length_step) * self.length_step, limit)
        ids = np.full((len(rows), width), self.tokenizer.pad_token_id or 0, np.int32)
        types = np.zeros((len(rows), width), np.int32)
        mask = np.zeros((len(rows), width), np.int32)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            if "token_type_ids" in features:
                types[i, : len(row)] = features["token_type_ids"][i]
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}

    def forward(self, features: dict[str, np.ndarray], params: EmbeddingParams) -> Any:
        from mindspore import Tensor

        from openmind.ms.models.bert import BertModel

        ids = features["input_ids"]
        positions = np.broadcast_to(np.arange(ids.shape[1], dtype=np.int32), ids.shape).copy()
        hidden = self._forward(
            Tensor(ids),
            Tensor(features["token_type_ids"]),
            Tensor(positions),
            Tensor(BertModel.extended_mask(features["attention_mask"])),
        )
        return hidden.asnumpy().astype(np.float32), features["attention_mask"]

    def postprocess(self, outputs: Any, params: EmbeddingParams) -> list[list[float]]:
        hidden, mask = outputs
        pooling = self.default_pooling if params.pooling == "auto" else params.pooling
        weights = mask[..., None].astype(np.float32)
        if pooling == "mean":
            pooled = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
        elif pooling == "max":
            pooled = np.where(weights > 0, hidden, -np.inf).max(1)
        elif pooling == "cls":
            pooled = hidden[:, 0]
        else:  # last non-padding token (right padding)
            pooled = hidden[np.arange(hidden.shape[0]), mask.sum(1) - 1]
        if params.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12, None)
        return pooled.tolist()
