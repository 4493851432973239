"""``token-classification``: label each token (named entities)."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import TokenClassificationParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class TokenClassificationPipeline(PipelineWrapper):
    """Text in, a list of ``{"entity", "word", "start", "end", "score"}`` out.

    ``start``/``end`` are character offsets into the input. With the default
    ``aggregation_strategy="simple"`` word pieces and B-/I- tags are merged into entities
    (``entity`` is then the entity group, e.g. ``PER``); ``"none"`` gives one item per token.

    Example::

        ner = pipeline("token-classification", model="./ner-model")
        ner("My name is Wolfgang and I live in Berlin")
    """

    task = "token-classification"
    params_cls = TokenClassificationParams

    def to_text(self, output: Any) -> str:
        return " ".join(f"[{o['word']}: {o['entity']}]" for o in output) or "(no entities)"
