"""``feature-extraction`` (openMind 1.0 / transformers semantics): per-token hidden states.

``text2emb`` gives one pooled sentence vector; this gives the encoder's last hidden state for every
token, shaped as transformers' feature-extraction pipeline returns it (``[1][tokens][hidden]`` per
input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.nlp.pipelines.wrapper import PipelineWrapper


@dataclass(frozen=True)
class FeatureExtractionParams:
    #: tokenizer arguments, e.g. ``{"truncation": True, "max_length": 128}``
    tokenize_kwargs: dict | None = None

    def check(self) -> None:
        return None


class FeatureExtractionPipeline(PipelineWrapper):
    """Text in, per-token hidden states out (``list[list[list[float]]]``: 1 x tokens x hidden).

    Example::

        extract = pipeline("feature-extraction", model="./bert-model")
        states = extract("Hello world")        # states[0][i] is token i's vector
        len(states[0]) == len(extract.backend.tokenizer("Hello world")["input_ids"])

    For one vector per sentence use ``text2emb``.
    """

    task = "feature-extraction"
    params_cls = FeatureExtractionParams

    def to_text(self, output: Any) -> str:
        import json

        return json.dumps([[[round(x, 6) for x in token] for token in row] for row in output])
