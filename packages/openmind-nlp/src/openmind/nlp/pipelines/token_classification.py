"""``token-classification``: label each token (named entities)."""

from __future__ import annotations

from typing import Any

from openmind.nlp.pipelines.base import TokenClassificationParams
from openmind.nlp.pipelines.wrapper import PipelineWrapper


class TokenClassificationPipeline(PipelineWrapper):
    """Text in, a list of entities out (a list of such lists for a list of inputs).

    As openMind 1.0 / transformers (the default ``return_format``): ``aggregation_strategy``
    defaults to ``"none"``, one ``{"entity", "score", "index", "word", "start", "end"}`` per token;
    with ``"simple"``, ``"first"`` ... word pieces and B-/I- tags are merged into
    ``{"entity_group", "score", "word", "start", "end"}``.
    ``return_format="openmind"``: ``{"entity", "word", "start", "end", "score"}`` items and
    ``aggregation_strategy="simple"`` by default (``entity`` is then the group, e.g. ``PER``).
    ``start``/``end`` are character offsets into the input.

    Example::

        ner = pipeline("token-classification", model="./ner-model")
        ner("My name is Wolfgang and I live in Berlin")
    """

    task = "token-classification"
    params_cls = TokenClassificationParams

    def configure(self, **options: Any) -> Any:
        if self.return_format == "transformers":
            options.setdefault("aggregation_strategy", "none")  # transformers' default
        return super().configure(**options)

    def postprocess(self, output: Any, item: Any) -> Any:
        if self.return_format == "transformers":
            return output
        return [{k: v for k, v in entity.items() if k != "index"} for entity in output]

    def transformers_shape(self, outputs: list[Any], single: bool, params: dict[str, Any]) -> Any:
        strategy = params.get("aggregation_strategy", self.defaults.aggregation_strategy)
        key = "entity" if strategy == "none" else "entity_group"
        order = ("score", "index", "word", "start", "end") if strategy == "none" else ("score", "word", "start", "end")
        shaped = [[{key: e["entity"], **{k: e[k] for k in order if k in e}} for e in entities] for entities in outputs]
        return shaped[0] if single else shaped

    def to_text(self, output: Any) -> str:
        return " ".join(f"[{o['word']}: {o.get('entity', o.get('entity_group'))}]" for o in output) or "(no entities)"
