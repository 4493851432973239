"""``zero-shot-classification``: score a text against labels chosen at call time (NLI models)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.nlp.errors import I_BAD_PARAM
from openmind.nlp.pipelines.wrapper import PipelineWrapper


@dataclass(frozen=True)
class ZeroShotParams:
    """transformers' zero-shot-classification parameters (same names, same defaults)."""

    candidate_labels: tuple[str, ...] | list[str] | str | None = None
    hypothesis_template: str = "This example is {}."
    multi_label: bool = False

    def check(self) -> None:
        labels = self.candidate_labels
        if labels is None:  # given with each call; the wrapper checks that it was
            return
        if isinstance(labels, str):
            labels = [s for s in labels.split(",") if s.strip()]
        if not labels or not all(isinstance(s, str) and s.strip() for s in labels):
            raise I_BAD_PARAM.error(
                f"candidate_labels={self.candidate_labels!r}: give one or more labels",
                location="candidate_labels",
                hint='Example: classify("I love it", candidate_labels=["positive", "negative"]).',
            )
        if "{}" not in self.hypothesis_template:
            raise I_BAD_PARAM.error(
                f"hypothesis_template={self.hypothesis_template!r} has no '{{}}' for the label",
                location="hypothesis_template",
            )


class ZeroShotClassificationPipeline(PipelineWrapper):
    """A text and candidate labels in, ``{"sequence", "labels", "scores"}`` out (best first).

    Example::

        classify = pipeline("zero-shot-classification", model="./deberta-nli")
        classify("I have a problem with my iphone", candidate_labels=["urgent", "phone", "tablet"])

    Options: ``candidate_labels`` (required; a list or a comma-separated string),
    ``hypothesis_template`` (default ``"This example is {}."``), ``multi_label``.
    """

    task = "zero-shot-classification"
    params_cls = ZeroShotParams

    def __call__(self, inputs: Any, *args: Any, **params: Any) -> Any:
        if args:  # transformers' positional form: classify(text, labels)
            params.setdefault("candidate_labels", args[0])
        if params.get("candidate_labels", self.defaults.candidate_labels) is None:
            raise I_BAD_PARAM.error(
                "zero-shot-classification needs candidate_labels",
                location="candidate_labels",
                hint='Example: classify("I love it", candidate_labels=["positive", "negative"]).',
            )
        return super().__call__(inputs, **params)

    def to_text(self, output: Any) -> str:
        return ", ".join(f"{label} ({score:.4f})" for label, score in zip(output["labels"], output["scores"]))
