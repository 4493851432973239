"""``text-classification``: label a text."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import ClassificationParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class TextClassificationPipeline(PipelineWrapper):
    """Text in, ``[{"label", "score"}]`` out, as openMind 1.0 / transformers: one input gives a list
    of one best label, a list of inputs one best label each; with ``top_k`` given (``None``: every
    label) a list per input, best first. ``return_format="openmind"``: ``{"label", "score"}`` per
    input (a list of them when ``top_k`` > 1 or None).

    Example::

        classify = pipeline("text-classification", model="./sentiment-model")
        classify("What a great movie!")          # [{"label": "positive", "score": 0.98}]
        classify(["good", "bad"], top_k=None)    # every label per input, best first

    Options: ``top_k`` (default 1), ``function_to_apply`` (``auto``: sigmoid for multi-label
    models, softmax otherwise; ``softmax``, ``sigmoid``, ``none``).
    """

    task = "text-classification"
    params_cls = ClassificationParams

    def configure(self, **options: Any) -> Any:
        #: transformers returns a list per input once top_k is given (at build time or per call)
        self.top_k_given = "top_k" in options
        return super().configure(**options)

    def shape(self, outputs: list[Any], single: bool, params: dict[str, Any]) -> Any:
        top_k = params.get("top_k", self.defaults.top_k)
        if self.return_format == "transformers":
            # transformers: a list per input once top_k is given (at build time or per call), else the
            # best {label, score}; one input comes wrapped in a list unless the call itself gave top_k
            items = outputs if self.top_k_given or "top_k" in params else [o[0] for o in outputs]
            if single:
                return items[0] if "top_k" in params else items
            return items
        if top_k == 1:
            return outputs[0][0] if single else [o[0] for o in outputs]
        return outputs[0] if single else outputs

    def to_text(self, output: Any) -> str:
        items = output if isinstance(output, list) else [output]
        return ", ".join(f"{o['label']} ({o['score']:.4f})" for o in items)
