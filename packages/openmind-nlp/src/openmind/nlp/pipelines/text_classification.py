"""``text-classification``: label a text."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import ClassificationParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class TextClassificationPipeline(PipelineWrapper):
    """Text in, ``{"label", "score"}`` out (a list of them, best first, when ``top_k`` > 1 or None).

    Example::

        classify = pipeline("text-classification", model="./sentiment-model")
        classify("What a great movie!")          # {"label": "positive", "score": 0.98}
        classify(["good", "bad"], top_k=None)    # every label per input, best first

    Options: ``top_k`` (default 1), ``function_to_apply`` (``auto``: sigmoid for multi-label
    models, softmax otherwise; ``softmax``, ``sigmoid``, ``none``).
    """

    task = "text-classification"
    params_cls = ClassificationParams

    def __call__(self, inputs: Any, **params: Any) -> Any:
        top_k = params.get("top_k", self.defaults.top_k)
        result = super().__call__(inputs, **params)
        if top_k == 1:
            return result[0] if isinstance(inputs, str) else [r[0] for r in result]
        return result

    def to_text(self, output: Any) -> str:
        items = output if isinstance(output, list) else [output]
        return ", ".join(f"{o['label']} ({o['score']:.4f})" for o in items)
