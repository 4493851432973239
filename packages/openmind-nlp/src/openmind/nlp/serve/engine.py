"""The engine contract between the HTTP server and a model.

The server (``app.py``) validates requests, turns each into a :class:`Job` and hands it to the
:class:`~openmind.nlp.serve.scheduler.Scheduler`, which groups jobs that arrive together into one
batch and calls :meth:`Engine.run_batch` on a worker thread. An engine is a thin adapter over the
task pipelines (``openmind.nlp.serve.pipeline_engine``), so what the server returns is what the
chat pipeline returns for the same request; other engines (the vLLM / LMDeploy / MindIE proxies)
do not go through this contract at all, they forward HTTP.

Nothing here imports a framework.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from openmind.nlp.pipelines.base import TokenLogprob  # one definition, shared with the pipelines

__all__ = ["Engine", "Job", "JobKind", "Output", "Result", "Sampling", "TokenLogprob"]

#: the OpenAI kinds; a :class:`~openmind.nlp.serve.pipeline_engine.TaskEngine` takes its task's name
#: (``"text2image"`` ...) as the kind of the jobs its routes submit
JobKind = Literal["chat", "completion", "embedding"] | str


@dataclass(frozen=True)
class Sampling:
    """Decoding parameters of one request (OpenAI names, validated by the schemas)."""

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    #: ``None``: no logprobs; ``k >= 0``: the chosen token's logprob plus the top ``k`` alternatives.
    logprobs: int | None = None
    #: vLLM's extras: ``top_k`` (``None``/0/-1: off), ``min_p``, ``repetition_penalty``; ``do_sample``
    #: (``False``: greedy whatever the temperature)
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    do_sample: bool | None = None
    #: per-row controls (OpenAI): ``(token_id, bias)`` pairs, penalties in [-2, 2]
    logit_bias: tuple[tuple[int, float], ...] = ()
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0 or self.do_sample is False


@dataclass
class Output:
    """One generated choice."""

    text: str
    finish_reason: str = "stop"  # "stop" | "length" | "cancelled"
    completion_tokens: int = 0
    logprobs: list[TokenLogprob] | None = None
    #: completions with ``echo``: the prompt's tokens (the first one has ``logprob=None``)
    prompt_logprobs: list[TokenLogprob] | None = None


@dataclass
class Result:
    """What a job returns: ``n`` outputs (chat / completion), vectors (embedding) or a task pipeline's value."""

    outputs: list[Output] = field(default_factory=list)
    embeddings: list[list[float]] = field(default_factory=list)
    prompt_tokens: int = 0
    #: a task pipeline's own output (:class:`~openmind.nlp.serve.pipeline_engine.TaskEngine`: e.g. PIL images)
    value: Any = None


@dataclass(eq=False)
class Job:
    """One request's work. ``prompt`` is messages (chat), a string or token ids (completion) or a
    list of strings / token-id lists (embedding)."""

    kind: JobKind
    prompt: Any
    sampling: Sampling = field(default_factory=Sampling)
    n: int = 1
    echo: bool = False
    adapter: str | None = None
    tools: list[dict] | None = None
    #: a grammar the output must follow (:class:`openmind.nlp.pipelines.controls.Constraint`):
    #: ``response_format`` json_object / json_schema, or a forced tool call
    constraint: Any = None
    #: called from the worker thread with ``(choice_index, text_delta)`` while generating (streaming)
    on_text: Callable[[int, str], None] | None = None
    #: set when the client went away or the request timed out; engines stop the job's rows
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: filled by :meth:`Engine.prepare`: prompt token count and anything the engine caches
    prompt_tokens: int = 0
    prepared: Any = None

    @property
    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()


class Engine(Protocol):
    """What the native server needs from a model.

    ``run_batch`` is called on one worker thread with jobs that share a :meth:`batch_key`; it
    returns one :class:`Result` (or an exception, which fails only that job) per job, in order.
    """

    #: the served model's name (``/v1/models``)
    name: str
    #: what it can do: a subset of {"chat", "completion", "embedding"}, or a served task's name
    kinds: frozenset[str]
    #: LoRA adapters servable by name
    adapters: tuple[str, ...]

    def prepare(self, job: Job) -> int:
        """Render / tokenize ``job.prompt`` (raising a coded error on bad input), store what
        :meth:`run_batch` needs in ``job.prepared`` and return the prompt token count."""
        ...

    def batch_key(self, job: Job) -> Any:
        """Jobs with equal keys may share one batch."""
        ...

    def run_batch(self, jobs: list[Job]) -> list[Result | BaseException]: ...
