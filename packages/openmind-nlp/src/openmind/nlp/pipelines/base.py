"""NLP's side of the wrapper <-> pipeline contract: the task-specific parameter and output types.

The generic contract (:class:`Pipeline`, :class:`LoadOptions`) lives in
:mod:`openmind.core.pipelines.base` and is re-exported here, so ``from openmind.nlp.pipelines.base
import Pipeline, LoadOptions`` keeps working. A task has one *wrapper* (framework neutral, in
:mod:`openmind.nlp.pipelines`) and one *pipeline* per framework (``openmind.pt.pipelines`` on PyTorch, ``openmind.ms`` on MindSpore), registered as
a :class:`~openmind.core.specs.PipelineSpec` whose ``impl`` names a :class:`Pipeline` subclass.

The wrapper owns everything that does not depend on the framework: argument handling, input
validation (coded errors), chat templates, single-vs-batch shapes, output formatting. The pipeline
owns loading, tensors and the model. They meet here, and only here:

=================================  ================================================================
wrapper calls                      pipeline provides
=================================  ================================================================
``cls.load(model_dir, options)``   a loaded pipeline (``options``: :class:`LoadOptions`)
``p.tokenizer``                    a Hugging Face-compatible tokenizer (``tok(text)["input_ids"]``,
                                   ``decode``, ``chat_template``, special tokens)
``p.run(inputs, params, bs)``      outputs, one per input, in order; batches of ``bs`` through
                                   ``preprocess -> forward -> postprocess``
``p.describe()``                   ``{"framework", "backend", "device", "dtype", "model"}``
=================================  ================================================================

Inputs, params and outputs per task (inputs are already validated by the wrapper):

==========================  ===============================  ======================  =================================
task(s)                     ``inputs`` items                 ``params``              output items
==========================  ===============================  ======================  =================================
chat, text-generation,      ``str`` (tokenized with special  :class:`GenerationParams`  :class:`Generation`
summarization, translation  tokens) or ``list[int]`` (ids
                            used as they are)
text2emb                    ``str``                          :class:`EmbeddingParams`   ``list[float]``
text-classification        ``str``                          :class:`ClassificationParams`  ``list[{label, score}]``
                                                                                     (best first, ``top_k`` long)
token-classification       ``str``                          :class:`TokenClassificationParams`  ``list[{entity, word,
                                                                                     start, end, score}]``
fill-mask                   ``str`` with the mask token      :class:`FillMaskParams`    ``list[{score, token,
                                                                                     token_str, sequence}]``
==========================  ===============================  ======================  =================================

Generative pipelines (:class:`GenerativePipeline`) add what serving and evaluation need:

* ``generate(prompts, params, *, on_text=None, is_cancelled=None, adapter=None)`` — batched
  generation; ``params`` may be one :class:`GenerationParams` or one per prompt (prompts with
  equal params share a batch); ``on_text(i, delta)`` streams text of prompt ``i`` while it is
  generated; ``is_cancelled(i)`` stops prompt ``i`` early (``finish_reason="cancelled"``).
  Greedy results must not depend on batching (left padding, exact).
* ``stream(prompt, params)`` — a :class:`TextStream` of text deltas; ``"".join(stream)`` equals
  the ``text`` of ``generate([prompt], params)[0]``.
* stop strings (``params.stop``) end generation and are never part of the returned/streamed text.
* ``GenerationParams.logprobs`` / ``top_logprobs`` — :class:`TokenLogprob` of each generated token.
* ``loglikelihood(requests)`` — for ``(context, continuation)`` pairs: the summed log-probability of
  the continuation given the context and whether greedy decoding would produce it.
* ``prompt_logprobs(prompts, top_logprobs=0)`` — log-probabilities of the prompt tokens themselves.
* ``LoadOptions.adapter`` loads a LoRA adapter on top of the model; ``add_adapter(name, path)``
  loads more, selected per call with ``adapter=name``.

Errors: pipelines raise coded errors (:mod:`openmind.nlp.errors`): OM-M101 no tokenizer, OM-M102
pickle refused, OM-M103 bad adapter, OM-M104 load failure, OM-M105 remote code needed, OM-M106
wrong head, OM-I103 prompt too long. Nothing here imports a framework.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from openmind.core.pipelines.base import DEFAULT_MAX_NEW_TOKENS, LoadOptions, Pipeline
from openmind.nlp.errors import I_BAD_PARAM

__all__ = [  # the generic contract (core) re-exported beside NLP's task types
    "DEFAULT_MAX_NEW_TOKENS",
    "ClassificationParams",
    "EmbeddingParams",
    "FillMaskParams",
    "Generation",
    "GenerationParams",
    "GenerativePipeline",
    "LoadOptions",
    "Pipeline",
    "Prompt",
    "TextStream",
    "TokenClassificationParams",
    "TokenLogprob",
]

#: a generation prompt: text (tokenized with the tokenizer's special tokens) or token ids.
Prompt = str | list[int]


@dataclass(frozen=True)
class GenerationParams:
    """Decoding parameters of one request. ``None`` means "the model's generation_config"."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    do_sample: bool | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    num_beams: int = 1
    stop: tuple[str, ...] = ()
    seed: int | None = None
    #: return the log-probability of each generated token
    logprobs: bool = False
    #: and this many alternatives per position (implies ``logprobs``)
    top_logprobs: int = 0
    #: per-row controls (``logit_bias``, penalties, ``min_p``, grammars: :mod:`.controls`); rows
    #: that differ only here share a batch. Inside ``generate_batch`` this is the tuple of the
    #: batch's rows' controls (``None`` entries for rows without any), or ``None``.
    controls: Any = None
    #: transformers' ``generate`` options (PyTorch backends; others refuse them, OM-I102):
    #: at least this many new tokens, no repeated n-grams of this size, beam length penalty / stop
    min_new_tokens: int | None = None
    no_repeat_ngram_size: int | None = None
    length_penalty: float | None = None
    early_stopping: bool | None = None

    #: the options above, which only backends with ``supports_generate_options`` honour
    GENERATE_OPTIONS: ClassVar[tuple[str, ...]] = (
        "min_new_tokens",
        "no_repeat_ngram_size",
        "length_penalty",
        "early_stopping",
    )
    NAMES: ClassVar[tuple[str, ...]] = (
        "max_new_tokens",
        "do_sample",
        "temperature",
        "top_p",
        "top_k",
        "repetition_penalty",
        "num_beams",
        "stop",
        "seed",
        "logprobs",
        "top_logprobs",
        "controls",
        *GENERATE_OPTIONS,
    )

    @classmethod
    def build(cls, base: GenerationParams | None = None, **values: Any) -> GenerationParams:
        """``base`` updated with the non-``None`` ``values``, validated (OM-I102 on a bad value).

        ``generation_seed`` is accepted for ``seed`` (the unified argument's name); ``temperature=0``
        means greedy decoding; a single stop string may be given as ``str``.
        """
        if "generation_seed" in values:
            values.setdefault("seed", values.pop("generation_seed"))
        unknown = sorted(set(values) - set(cls.NAMES))
        if unknown:
            raise I_BAD_PARAM.error(f"unknown generation parameter(s): {', '.join(unknown)}")
        merged = {name: getattr(base, name) for name in cls.NAMES} if base else {}
        merged.update({k: v for k, v in values.items() if v is not None})
        stop = merged.get("stop", ())
        if isinstance(stop, str):
            stop = (stop,)
        merged["stop"] = tuple(s for s in stop if s)
        params = cls(**merged)
        params.check()
        if params.temperature == 0:
            params = cls(**{**merged, "do_sample": False, "temperature": None})
        return params

    def check(self) -> None:
        def bad(name: str, value: Any, rule: str) -> None:
            raise I_BAD_PARAM.error(f"{name}={value!r}: {rule}", location=name)

        if not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            bad("max_new_tokens", self.max_new_tokens, "must be an integer >= 1")
        if self.temperature is not None and self.temperature < 0:
            bad("temperature", self.temperature, "must be >= 0")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            bad("top_p", self.top_p, "must be in (0, 1]")
        if self.top_k is not None and self.top_k < 0:
            bad("top_k", self.top_k, "must be >= 0")
        if self.repetition_penalty is not None and self.repetition_penalty <= 0:
            bad("repetition_penalty", self.repetition_penalty, "must be > 0")
        if not isinstance(self.num_beams, int) or self.num_beams < 1:
            bad("num_beams", self.num_beams, "must be an integer >= 1")
        if self.top_logprobs < 0:
            bad("top_logprobs", self.top_logprobs, "must be >= 0")
        if any(not isinstance(s, str) for s in self.stop):
            bad("stop", self.stop, "must be a list of strings")
        for name in ("min_new_tokens", "no_repeat_ngram_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                bad(name, value, "must be an integer >= 0")
        if self.length_penalty is not None and not isinstance(self.length_penalty, (int, float)):
            bad("length_penalty", self.length_penalty, "must be a number")

    @property
    def wants_logprobs(self) -> bool:
        return self.logprobs or self.top_logprobs > 0


@dataclass
class TokenLogprob:
    """A token with its log-probability and the ``top_logprobs`` best alternatives at its position."""

    token: str
    token_id: int
    logprob: float | None
    top: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class Generation:
    """The result of generating from one prompt."""

    #: generated text, stop strings and special tokens removed
    text: str
    #: generated token ids (without the prompt; without trailing padding / EOS)
    token_ids: list[int]
    #: ``"stop"`` (EOS or a stop string), ``"length"`` (max_new_tokens) or ``"cancelled"``
    finish_reason: str
    prompt_tokens: int
    #: per generated token when ``params.logprobs``/``top_logprobs``
    logprobs: list[TokenLogprob] | None = None

    @property
    def completion_tokens(self) -> int:
        return len(self.token_ids)


class TextStream:
    """An iterator of text deltas produced on a worker thread; ``.generation`` when exhausted.

    Backends create it with a function ``produce(emit) -> Generation`` that calls ``emit(delta)``
    for each delta. Leaving the loop early (``break``) cancels the generation.
    """

    _END = object()

    def __init__(self, produce: Callable[[Callable[[str], None], Callable[[], bool]], Generation]) -> None:
        import queue

        self._queue: queue.Queue = queue.Queue()
        self._cancel = threading.Event()
        self.generation: Generation | None = None
        self._error: BaseException | None = None

        def target() -> None:
            try:
                self.generation = produce(self._queue.put, self._cancel.is_set)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
                self._error = exc
            finally:
                self._queue.put(self._END)

        self._thread = threading.Thread(target=target, name="openmind-stream", daemon=True)
        self._thread.start()

    def __iter__(self) -> Iterator[str]:
        try:
            while True:
                item = self._queue.get()
                if item is self._END:
                    break
                yield item
        finally:
            self._cancel.set()
            self._thread.join()
        if self._error is not None:
            raise self._error

    def text(self) -> str:
        return "".join(self)

    def close(self) -> None:
        self._cancel.set()


@dataclass(frozen=True)
class EmbeddingParams:
    #: ``auto`` (the sentence-transformers config of the folder, else ``mean``), ``mean``, ``cls``, ``last``
    pooling: str = "auto"
    normalize: bool = True
    #: truncate inputs to this many tokens (default: the model's limit)
    max_length: int | None = None

    def check(self) -> None:
        if self.pooling not in ("auto", "mean", "cls", "last", "max"):
            raise I_BAD_PARAM.error(f"pooling={self.pooling!r}: use auto, mean, cls, last or max", location="pooling")


@dataclass(frozen=True)
class ClassificationParams:
    #: labels returned per input (``None``: all)
    top_k: int | None = 1
    #: ``auto`` (sigmoid for multi-label models, else softmax), ``softmax``, ``sigmoid``, ``none``
    function_to_apply: str = "auto"

    def check(self) -> None:
        if self.function_to_apply not in ("auto", "softmax", "sigmoid", "none"):
            raise I_BAD_PARAM.error(
                f"function_to_apply={self.function_to_apply!r}: use auto, softmax, sigmoid or none",
                location="function_to_apply",
            )
        if self.top_k is not None and self.top_k < 1:
            raise I_BAD_PARAM.error(f"top_k={self.top_k!r}: must be >= 1 (or None for all)", location="top_k")


@dataclass(frozen=True)
class TokenClassificationParams:
    #: ``none`` (one item per token), ``simple``, ``first``, ``average``, ``max`` (merge word pieces/entities)
    aggregation_strategy: str = "simple"

    def check(self) -> None:
        if self.aggregation_strategy not in ("none", "simple", "first", "average", "max"):
            raise I_BAD_PARAM.error(
                f"aggregation_strategy={self.aggregation_strategy!r}: use none, simple, first, average or max",
                location="aggregation_strategy",
            )


@dataclass(frozen=True)
class FillMaskParams:
    top_k: int = 5

    def check(self) -> None:
        if self.top_k < 1:
            raise I_BAD_PARAM.error(f"top_k={self.top_k!r}: must be >= 1", location="top_k")


class GenerativePipeline(Pipeline):
    """A pipeline for decoder-only generation (chat, text-generation, instruction tasks)."""

    #: the model's context window in tokens, when known
    max_length: int | None = None

    @abc.abstractmethod
    def generate(
        self,
        prompts: Sequence[Prompt],
        params: GenerationParams | Sequence[GenerationParams],
        *,
        batch_size: int = 1,
        on_text: Callable[[int, str], None] | None = None,
        is_cancelled: Callable[[int], bool] | None = None,
        adapter: str | None = None,
    ) -> list[Generation]:
        """Generate for each prompt (see the module docstring)."""

    def stream(self, prompt: Prompt, params: GenerationParams, *, adapter: str | None = None) -> TextStream:
        """Text deltas of one generation, produced on a worker thread."""

        def produce(emit: Callable[[str], None], cancelled: Callable[[], bool]) -> Generation:
            return self.generate(
                [prompt],
                params,
                on_text=lambda _i, delta: emit(delta),
                is_cancelled=lambda _i: cancelled(),
                adapter=adapter,
            )[0]

        return TextStream(produce)

    @abc.abstractmethod
    def loglikelihood(self, requests: Sequence[tuple[str, str]], *, batch_size: int = 1) -> list[tuple[float, bool]]:
        """``(sum log p(continuation | context), continuation is the greedy decode)`` per pair."""

    @abc.abstractmethod
    def prompt_logprobs(self, prompts: Sequence[Prompt], top_logprobs: int = 0) -> list[list[TokenLogprob]]:
        """Per prompt token, its log-probability given the tokens before it (``None`` for the first)."""

    @abc.abstractmethod
    def add_adapter(self, name: str, path: str) -> None:
        """Load another LoRA adapter, selectable with ``generate(..., adapter=name)``."""

    def run(self, inputs: Sequence[Any], params: Any, batch_size: int = 1) -> list[Any]:
        return self.generate(inputs, params, batch_size=batch_size)
