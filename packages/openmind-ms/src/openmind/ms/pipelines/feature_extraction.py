"""``feature-extraction`` on MindSpore: the native BERT encoder's last hidden state for every token,
shaped as openMind 1.0 / transformers return it (``[1][tokens][hidden]`` per input).

The same encoder as ``text2emb`` (:class:`~openmind.ms.pipelines.embedding.MindSporeEmbedding`),
without pooling; the tokenizer is called as transformers' feature-extraction pipeline calls it
(special tokens added, ``tokenize_kwargs`` passed through, no truncation unless asked).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openmind.core.errors import I_BAD_INPUT
from openmind.ms.pipelines.embedding import MindSporeEmbedding


class MindSporeFeatureExtraction(MindSporeEmbedding):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.task = "feature-extraction"
        self.positions = int(self.model.config.max_position_embeddings)

    def preprocess(self, inputs: list[str], params: Any) -> dict[str, np.ndarray]:
        options = dict(getattr(params, "tokenize_kwargs", None) or {})
        options.pop("return_tensors", None)
        options["padding"] = False
        features = self.tokenizer(inputs, **options)
        for i, row in enumerate(features["input_ids"]):
            if len(row) > self.positions:
                raise I_BAD_INPUT.error(
                    f"input[{i}] has {len(row)} tokens; the model has {self.positions} positions",
                    location=f"input[{i}]",
                    hint="Pass tokenize_kwargs={'truncation': True} (or a shorter text).",
                )
        return self.pad(features, self.positions)

    def postprocess(self, outputs: Any, params: Any) -> list[list[list[list[float]]]]:
        hidden, mask = outputs
        return [[hidden[i, : int(mask[i].sum())].tolist()] for i in range(hidden.shape[0])]
