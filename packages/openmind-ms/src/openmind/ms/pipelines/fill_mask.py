"""``fill-mask`` on MindSpore: the native ``BertForMaskedLM`` (BERT-family checkpoints with their
``cls.predictions`` head), with transformers' fill-mask conventions: softmax over the vocabulary at
the mask, the ``top_k`` candidates best first, each ``{"score", "token", "token_str", "sequence"}``
(``sequence``: the text with the candidate in place, special tokens and padding left out).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openmind.core.errors import I_BAD_INPUT
from openmind.core.pipelines.base import LoadOptions, Pipeline
from openmind.ms import runtime
from openmind.ms.pipelines.loading import check_folder, load_tokenizer, resolve_dtype
from openmind.nlp.pipelines.base import FillMaskParams


class MindSporeFillMask(Pipeline):
    framework = "ms"
    backend = "native"
    #: inputs are padded to a multiple of this many tokens (compiled graphs are reused)
    length_step = 16

    def __init__(self, model: Any, tokenizer: Any, *, model_dir: str, device: str, dtype: str) -> None:
        import mindspore as ms

        self.task = "fill-mask"
        self.model = model
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype
        self.positions = int(model.config.max_position_embeddings)

        def logits(ids, types, positions, mask):
            return model(ids, types, positions, mask)

        self._forward = ms.jit(logits)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> MindSporeFillMask:
        check_folder(model_dir, options)
        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        device = runtime.set_device(options.device)
        dtype = resolve_dtype(options.dtype, "CPU")
        from openmind.ms.models import auto

        model, _ = auto.load(model_dir, "masked-lm", dtype=dtype)
        return cls(model, tokenizer, model_dir=model_dir, device=device, dtype=dtype)

    def preprocess(self, inputs: list[str], params: FillMaskParams) -> dict[str, Any]:
        rows = self.tokenizer(inputs, padding=False)
        ids_rows = rows["input_ids"]
        for i, row in enumerate(ids_rows):
            if len(row) > self.positions:
                raise I_BAD_INPUT.error(
                    f"input[{i}] has {len(row)} tokens; the model has {self.positions} positions",
                    location=f"input[{i}]",
                )
        width = min(-(-max(len(r) for r in ids_rows) // self.length_step) * self.length_step, self.positions)
        pad = self.tokenizer.pad_token_id or 0
        ids = np.full((len(ids_rows), width), pad, np.int32)
        types = np.zeros((len(ids_rows), width), np.int32)
        mask = np.zeros((len(ids_rows), width), np.int32)
        for i, row in enumerate(ids_rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
            if "token_type_ids" in rows:
                types[i, : len(row)] = rows["token_type_ids"][i]
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask, "rows": ids_rows}

    def forward(self, features: dict[str, Any], params: FillMaskParams) -> Any:
        from mindspore import Tensor

        from openmind.ms.models.bert import BertModel

        ids = features["input_ids"]
        positions = np.broadcast_to(np.arange(ids.shape[1], dtype=np.int32), ids.shape).copy()
        logits = self._forward(
            Tensor(ids),
            Tensor(features["token_type_ids"]),
            Tensor(positions),
            Tensor(BertModel.extended_mask(features["attention_mask"])),
        )
        return logits.asnumpy().astype(np.float32), features["rows"]

    def postprocess(self, outputs: Any, params: FillMaskParams) -> list[list[dict[str, Any]]]:
        logits, rows = outputs
        tok = self.tokenizer
        results = []
        for i, row in enumerate(rows):
            at = row.index(tok.mask_token_id)
            scores = logits[i, at].astype(np.float64)
            probs = np.exp(scores - scores.max())
            probs /= probs.sum()
            top = np.argsort(-probs, kind="stable")[: params.top_k]
            candidates = []
            for token in top.tolist():
                filled = [token if j == at else t for j, t in enumerate(row)]
                filled = [t for t in filled if t != tok.pad_token_id]
                candidates.append(
                    {
                        "score": float(probs[token]),
                        "token": int(token),
                        "token_str": tok.decode([token]),
                        "sequence": tok.decode(filled, skip_special_tokens=True),
                    }
                )
            results.append(candidates)
        return results
