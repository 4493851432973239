"""``text-classification`` on MindSpore: BERT or Llama-family sequence classifiers."""

from __future__ import annotations

from typing import Any

import numpy as np

from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.ms import runtime
from openmind.ms.pipelines.loading import check_folder, load_tokenizer, resolve_dtype
from openmind.nlp.pipelines.base import ClassificationParams


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class MindSporeTextClassification(Pipeline):
    framework = "ms"
    backend = "native"
    length_step = 16

    def __init__(self, model: Any, tokenizer: Any, config: dict, *, model_dir: str, device: str, dtype: str) -> None:
        import mindspore as ms

        self.task = "text-classification"
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype
        self.is_llama = hasattr(model, "prepare")
        labels = config.get("id2label") or {}
        self.id2label = {int(k): v for k, v in labels.items()}
        self.multi_label = config.get("problem_type") == "multi_label_classification"

        def score(*args):
            return model(*args)

        self._forward = ms.jit(score)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> MindSporeTextClassification:
        config = check_folder(model_dir, options)
        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        device = runtime.set_device(options.device)
        dtype = resolve_dtype(options.dtype, "CPU")
        from openmind.ms.models import auto

        model, config = auto.load(model_dir, "sequence-classification", dtype=dtype)
        return cls(model, tokenizer, config, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[str], params: ClassificationParams) -> dict[str, np.ndarray]:
        limit = min(getattr(self.tokenizer, "model_max_length", 10**6) or 10**6, 10**6)
        features = self.tokenizer(inputs, padding=False, truncation=True, max_length=limit)
        rows = features["input_ids"]
        width = -(-max(len(r) for r in rows) // self.length_step) * self.length_step
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = np.full((len(rows), width), pad, np.int32)
        types = np.zeros((len(rows), width), np.int32)
        mask = np.zeros((len(rows), width), np.int32)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            if "token_type_ids" in features:
                types[i, : len(row)] = features["token_type_ids"][i]
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}

    def forward(self, features: dict[str, np.ndarray], params: ClassificationParams) -> np.ndarray:
        from mindspore import Tensor

        ids, mask = features["input_ids"], features["attention_mask"]
        if self.is_llama:
            cos, sin, attn = self.model.prepare(mask, ids.shape[1])
            last = Tensor((mask.sum(1) - 1).astype(np.int32))
            logits = self._forward(Tensor(ids), cos, sin, attn, last)
        else:
            from openmind.ms.models.bert import BertModel

            positions = np.broadcast_to(np.arange(ids.shape[1], dtype=np.int32), ids.shape).copy()
            logits = self._forward(
                Tensor(ids),
                Tensor(features["token_type_ids"]),
                Tensor(positions),
                Tensor(BertModel.extended_mask(mask)),
            )
        return logits.asnumpy().astype(np.float64)

    def postprocess(self, outputs: np.ndarray, params: ClassificationParams) -> list[list[dict[str, Any]]]:
        function = params.function_to_apply
        if function == "auto":
            function = "sigmoid" if self.multi_label or outputs.shape[-1] == 1 else "softmax"
        if function == "softmax":
            scores = _softmax(outputs)
        elif function == "sigmoid":
            scores = 1 / (1 + np.exp(-outputs))
        else:
            scores = outputs
        result = []
        for row in scores:
            order = np.argsort(-row, kind="stable")
            if params.top_k is not None:
                order = order[: params.top_k]
            result.append(
                [{"label": self.id2label.get(int(i), f"LABEL_{int(i)}"), "score": float(row[i])} for i in order]
            )
        return result
