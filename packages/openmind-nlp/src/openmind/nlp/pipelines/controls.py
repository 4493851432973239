"""Per-row decoding controls: what may differ between the rows of ONE generation batch.

:class:`~openmind.nlp.pipelines.base.GenerationParams` fields shared by a batch (temperature, top_p,
top_k, ...) group requests into batches; the controls here do not: rows with different
``logit_bias``, penalties, ``min_p``, grammars (structured outputs, forced tool calls) or sampling
seeds run in the same batch, each row with its own logits processing (the PyTorch backend implements them in
:mod:`openmind.pt.pipelines.constrained`). Framework-neutral: no imports beyond the standard library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Alternative", "Constraint", "RowControls", "json_object_constraint", "json_schema_constraint"]


@dataclass(frozen=True)
class Alternative:
    """``prefix`` text, then a JSON value that matches ``schema`` (JSON text), then ``suffix``."""

    schema: str
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class Constraint:
    """The output must be one of ``alternatives`` (grammar-enforced), then the model's end token."""

    alternatives: tuple[Alternative, ...]
    #: a short description for errors and logs ("json_schema", "tool_choice=required" ...)
    label: str = "json_schema"


def json_schema_constraint(schema: dict[str, Any] | str, label: str = "json_schema") -> Constraint:
    text = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=False)
    return Constraint((Alternative(text),), label)


def json_object_constraint() -> Constraint:
    return json_schema_constraint({"type": "object"}, "json_object")


@dataclass(frozen=True)
class RowControls:
    """Controls of one row (OpenAI / vLLM semantics).

    * ``logit_bias``: ``(token_id, bias)`` pairs added to the logits (bias in [-100, 100]);
    * ``presence_penalty``: subtracted once from the logit of every token already generated;
    * ``frequency_penalty``: subtracted per occurrence of a token in the generated text;
    * ``min_p``: tokens below ``min_p`` x the top token's probability are dropped (sampling);
    * ``constraint``: a grammar the output must follow;
    * ``seed``: the row's own random stream when sampling: the row draws exactly what it draws alone
      with that ``seed`` (:meth:`CausalLMPipeline.generate
      <openmind.nlp.pipelines.causal.CausalLMPipeline.generate>` moves the seeds of rows that
      differ only by seed here, so that they share one batch).
    """

    logit_bias: tuple[tuple[int, float], ...] = ()
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    min_p: float | None = None
    constraint: Constraint | None = None
    seed: int | None = None

    @property
    def empty(self) -> bool:
        return self == RowControls()
