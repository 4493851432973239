"""THE contract between a pipeline wrapper and a per-framework pipeline, for every domain.

A task has one *wrapper* (framework neutral: :class:`openmind.core.pipelines.wrapper.PipelineWrapper`
or a domain's subclass of it) and one *pipeline* per framework, registered as a
:class:`~openmind.core.specs.PipelineSpec` whose ``impl`` names a :class:`Pipeline` subclass:

=================================  ================================================================
wrapper calls                      pipeline provides
=================================  ================================================================
``cls.load(model_dir, options)``   a loaded pipeline (``options``: :class:`LoadOptions`)
``p.run(inputs, params, bs)``      outputs, one per input, in order; batches of ``bs`` through
                                   ``preprocess -> forward -> postprocess``
``p.describe()``                   ``{"framework", "backend", "device", "dtype", "model"}``
=================================  ================================================================

What ``inputs``, ``params`` and the output items are is the task's business: a domain declares
its parameter and output types beside its wrappers (openmind-nlp: ``GenerationParams``,
``Generation``, ``EmbeddingParams`` ... in :mod:`openmind.nlp.pipelines.base`). Nothing here
imports a framework.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

#: the one default of ``max_new_tokens`` for every door that generates: ``pipeline(...)``,
#: ``openmind run``/``chat``, the unified ``generation`` arguments, ``/v1/chat/completions`` and
#: every backend. (``/v1/completions`` keeps OpenAI's documented default of 16 for that endpoint.)
DEFAULT_MAX_NEW_TOKENS = 512


@dataclass(frozen=True)
class LoadOptions:
    """How to load a model folder (from ``pipeline(...)`` keyword arguments / unified arguments)."""

    task: str
    device: str = "auto"
    dtype: str = "auto"
    #: LoRA adapter folder applied on top of the model (peft on PyTorch).
    adapter: str | None = None
    #: a tokenizer folder when the model folder has none of its own.
    tokenizer: str | None = None
    trust_remote_code: bool = False
    allow_pickle: bool = False


class Pipeline(abc.ABC):
    """A per-framework pipeline: what a :class:`~openmind.core.specs.PipelineSpec` ``impl`` names."""

    framework: ClassVar[str] = ""
    backend: ClassVar[str] = "default"

    task: str
    model_dir: str
    device: str
    dtype: str
    #: the tokenizer / processor of the model, when it has one
    tokenizer: Any

    @classmethod
    @abc.abstractmethod
    def load(cls, model_dir: str, options: LoadOptions) -> Pipeline:
        """Load ``model_dir`` (a validated local folder) as described by ``options``."""

    @abc.abstractmethod
    def preprocess(self, inputs: list[Any], params: Any) -> Any:
        """One batch of inputs -> framework features (tensors, padded)."""

    @abc.abstractmethod
    def forward(self, features: Any, params: Any) -> Any:
        """Features -> raw model outputs (no gradients)."""

    @abc.abstractmethod
    def postprocess(self, outputs: Any, params: Any) -> list[Any]:
        """Raw outputs -> one output item per input of the batch (plain Python values)."""

    def run(self, inputs: Sequence[Any], params: Any, batch_size: int = 1) -> list[Any]:
        """Outputs for ``inputs`` in order, ``batch_size`` at a time."""
        batch_size = max(1, int(batch_size))
        out: list[Any] = []
        for start in range(0, len(inputs), batch_size):
            chunk = list(inputs[start : start + batch_size])
            out += self.postprocess(self.forward(self.preprocess(chunk, params), params), params)
        return out

    def describe(self) -> dict[str, str]:
        return {
            "framework": self.framework,
            "backend": self.backend,
            "device": str(self.device),
            "dtype": str(self.dtype),
            "model": str(self.model_dir),
        }
