"""The native engine: the task pipelines behind the server.

Chat requests go through the chat wrapper's own prompt building (template, system prompt, tools,
the template's stop words) and the generative backend's batched ``generate``, so the server
returns exactly what ``pipeline("chat", ...)`` returns for the same request. Completions use the
same backend with the prompt as text (special tokens added) or token ids (as they are), and
``prompt_logprobs`` for ``echo``; embeddings use the ``text2emb`` pipeline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any

from openmind.nlp.serve.engine import Job, Output, Result, Sampling, TokenLogprob
from openmind.nlp.serve.errors import S_BAD_ADAPTER, S_NOT_SERVABLE


def _controls(sampling: Sampling, constraint: Any):
    from openmind.nlp.pipelines.controls import RowControls

    controls = RowControls(
        logit_bias=sampling.logit_bias,
        presence_penalty=sampling.presence_penalty,
        frequency_penalty=sampling.frequency_penalty,
        min_p=sampling.min_p,
        constraint=constraint,
    )
    return None if controls.empty else controls


def _params(base: Any, sampling: Sampling, choice: int, constraint: Any = None):
    from openmind.nlp.pipelines.base import GenerationParams

    # torch takes 64-bit seeds: seed + choice wraps instead of overflowing
    seed = None if sampling.seed is None else (sampling.seed + choice) % 2**64
    values: dict[str, Any] = {
        "max_new_tokens": sampling.max_tokens,
        "top_p": sampling.top_p if sampling.top_p < 1.0 else None,
        "top_k": sampling.top_k,
        "repetition_penalty": sampling.repetition_penalty,
        "seed": seed,
        "stop": tuple(sampling.stop),
        "logprobs": sampling.logprobs is not None,
        "top_logprobs": sampling.logprobs or 0,
        "controls": _controls(sampling, constraint),
    }
    if sampling.greedy:
        values.update(do_sample=False, temperature=None, top_k=None)
    else:
        values.update(do_sample=True, temperature=sampling.temperature)
    merged = {name: getattr(base, name) for name in GenerationParams.NAMES} if base is not None else {}
    merged.update(values)
    params = GenerationParams(**merged)
    params.check()
    return params


def _logprobs(tokenizer: Any, items: list[Any], prefix: list[int] | None = None) -> list[TokenLogprob]:
    """Backend logprobs with each token's text as it appears in the decoded sequence (a
    SentencePiece token decoded alone loses its leading space), so the pieces join to the text."""
    ids = list(prefix or [])
    done = tokenizer.decode(ids) if ids else ""
    out = []
    for t in items:
        ids.append(t.token_id)
        text = tokenizer.decode(ids)
        piece = text[len(done) :] if text.startswith(done) else t.token
        done = text
        out.append(TokenLogprob(piece, t.token_id, t.logprob, list(t.top)))
    return out


class PipelineEngine:
    """Serve a generative wrapper (``chat`` or ``text-generation``) and/or a ``text2emb`` wrapper."""

    def __init__(
        self,
        *,
        name: str,
        generator: Any = None,
        embedder: Any = None,
        adapters: dict[str, str] | None = None,
        primary_adapter: bool = False,
    ) -> None:
        if generator is None and embedder is None:
            raise S_NOT_SERVABLE.error("nothing to serve: neither a generative nor an embedding pipeline was built")
        self.name = name
        self.generator = generator
        self.embedder = embedder
        kinds = set()
        if generator is not None:
            kinds.add("completion")
            if _is_chat(getattr(generator, "task", "")):
                kinds.add("chat")
        if embedder is not None:
            kinds.add("embedding")
        self.kinds = frozenset(kinds)
        self._adapters: dict[str, str] = {}
        #: the backend's name of "the served model": its own --adapter ("default"), plain weights
        #: ("": adapters disabled) once named adapters are loaded, or None (nothing to switch)
        self.primary_adapter = primary_adapter
        for adapter, path in (adapters or {}).items():
            self.add_adapter(adapter, path)

    @property
    def adapters(self) -> tuple[str, ...]:
        return tuple(self._adapters)

    def add_adapter(self, name: str, path: str) -> None:
        if self.generator is None:
            raise S_BAD_ADAPTER.error(f"adapter {name!r}: LoRA adapters need a generative model")
        if not os.path.isfile(os.path.join(path, "adapter_config.json")):
            raise S_BAD_ADAPTER.error(f"adapter {name!r}: {path!r} has no adapter_config.json", location=path)
        self.generator.backend.add_adapter(name, path)
        self._adapters[name] = path

    def _base_adapter(self) -> str | None:
        if self.primary_adapter:
            return "default"
        return "" if self._adapters else None

    # ---- the engine contract -----------------------------------------------------------------

    @property
    def context_length(self) -> int | None:
        """The model's context (``max_position_embeddings``), or ``None`` when unknown."""
        if self.generator is None:
            return None
        return getattr(self.generator.backend, "max_length", None)

    def tool_parser(self) -> Any:
        """The tool-call parser of the served chat template (``None``: tool calls are not parsed)."""
        template = getattr(self.generator, "chat_template", None) if self.generator is not None else None
        name = getattr(template, "tool_parser", "") if template is not None else ""
        if not name:
            return None
        from openmind.nlp.templates.toolcalls import get_tool_parser

        return get_tool_parser(name)

    def _check_ids(self, ids: list[int], where: str) -> None:
        vocab = len(self.generator.backend.tokenizer)
        bad = [i for i in ids if not 0 <= i < vocab]
        if bad:
            from openmind.nlp.errors import I_BAD_PARAM

            raise I_BAD_PARAM.error(
                f"token id(s) {', '.join(map(str, bad[:5]))} outside the vocabulary (0..{vocab - 1})",
                location=where,
            )

    def _check_controls(self, job: Job) -> None:
        if job.sampling.logit_bias:
            self._check_ids([t for t, _ in job.sampling.logit_bias], "logit_bias")
        params = _params(self.generator.defaults, job.sampling, 0, job.constraint)
        if params.controls is None:
            return
        backend = self.generator.backend
        if not getattr(backend, "supports_controls", False):
            from openmind.nlp.errors import I_BAD_PARAM

            raise I_BAD_PARAM.error(
                f"logit_bias, presence/frequency penalties, min_p, response_format and forced tool calls are "
                f"not supported by the {getattr(backend, 'framework', '?')!r} backend",
                location="response_format" if job.constraint is not None else "logit_bias",
            )
        check = getattr(backend, "check_controls", None)
        if check is not None:  # compiles the grammar now: a bad schema is a 400 before queueing
            if job.kind == "chat":
                params = self.generator.with_stops(params)
            check(params.controls, params)

    def prepare(self, job: Job) -> int:
        if job.kind == "chat":
            wrapper = self.generator
            conversation = wrapper.check_item(job.prompt, None)
            overrides = {"tools": job.tools} if job.tools else {}
            ids = wrapper.prompt(conversation, overrides)
            job.prepared = ids
            self._check_controls(job)
            if isinstance(ids, (list, tuple, str)):
                return len(ids)
            # a prompt object of another chat wrapper (images: its backend counts the visual tokens)
            return len(wrapper.backend.encode(ids))
        if job.kind == "completion":
            tokenizer = self.generator.backend.tokenizer
            self._check_controls(job)
            if isinstance(job.prompt, str):
                job.prepared = job.prompt
                return len(tokenizer(job.prompt)["input_ids"])
            self._check_ids(list(job.prompt), "prompt")
            job.prepared = list(job.prompt)
            return len(job.prepared)
        tokenizer = self.embedder.backend.tokenizer
        texts = [t if isinstance(t, str) else tokenizer.decode(t) for t in job.prompt]
        job.prepared = texts
        return sum(len(tokenizer(t)["input_ids"]) for t in texts)

    def batch_key(self, job: Job) -> Any:
        return (job.kind, job.adapter, job.echo)

    def run_batch(self, jobs: list[Job]) -> list[Result | BaseException]:
        kind = jobs[0].kind
        if kind == "embedding":
            return self._embed(jobs)
        return self._generate(jobs)

    # ---- work --------------------------------------------------------------------------------

    def _embed(self, jobs: list[Job]) -> list[Result | BaseException]:
        texts = [t for job in jobs for t in job.prepared]
        vectors = self.embedder(texts, batch_size=max(1, len(texts)))
        out: list[Result | BaseException] = []
        at = 0
        for job in jobs:
            n = len(job.prepared)
            out.append(
                Result(embeddings=[list(map(float, v)) for v in vectors[at : at + n]], prompt_tokens=job.prompt_tokens)
            )
            at += n
        return out

    def _generate(self, jobs: list[Job]) -> list[Result | BaseException]:
        wrapper = self.generator
        backend = wrapper.backend
        tokenizer = backend.tokenizer
        rows: list[tuple[int, int]] = []  # (job index, choice)
        prompts: list[Any] = []
        params: list[Any] = []
        for j, job in enumerate(jobs):
            if job.sampling.max_tokens == 0:  # echo-only scoring request
                continue
            for c in range(job.n):
                call = _params(wrapper.defaults, job.sampling, c, job.constraint)
                if job.kind == "chat":
                    call = wrapper.with_stops(call)
                rows.append((j, c))
                prompts.append(job.prepared)
                params.append(call)
        generations: list[Any] = []
        if rows:

            def on_text(i: int, delta: str) -> None:
                j, c = rows[i]
                if jobs[j].on_text is not None:
                    jobs[j].on_text(c, delta)

            generations = backend.generate(
                prompts,
                params,
                batch_size=len(prompts),
                # decoding every step costs time: only when someone streams
                on_text=on_text if any(job.on_text is not None for job in jobs) else None,
                is_cancelled=lambda i: jobs[rows[i][0]].is_cancelled,
                adapter=jobs[0].adapter if jobs[0].adapter is not None else self._base_adapter(),
            )
        results = [Result(outputs=[Output("")] * 0, prompt_tokens=job.prompt_tokens) for job in jobs]
        for (j, _c), generation in zip(rows, generations):
            results[j].outputs.append(
                Output(
                    text=generation.text,
                    finish_reason=generation.finish_reason,
                    completion_tokens=generation.completion_tokens,
                    logprobs=_logprobs(tokenizer, generation.logprobs) if generation.logprobs is not None else None,
                )
            )
        echo = [j for j, job in enumerate(jobs) if job.echo]
        if echo:
            k = max(jobs[j].sampling.logprobs or 0 for j in echo)
            adapter = jobs[0].adapter if jobs[0].adapter is not None else self._base_adapter()
            # prompt_logprobs has no adapter argument in the pipeline contract: switch around it
            switch = getattr(backend, "_adapter", None)
            with switch(adapter) if switch is not None else contextlib.nullcontext():
                scored = backend.prompt_logprobs([jobs[j].prepared for j in echo], top_logprobs=k)
            for j, tokens in zip(echo, scored):
                prompt_lp = _logprobs(tokenizer, tokens)
                k_job = jobs[j].sampling.logprobs or 0
                prompt_lp = [dataclasses.replace(t, top=t.top[:k_job]) for t in prompt_lp]
                if not results[j].outputs:  # max_tokens == 0
                    results[j].outputs = [
                        Output("", "length", 0, [] if jobs[j].sampling.logprobs is not None else None)
                    ] * jobs[j].n
                results[j].outputs = [dataclasses.replace(o, prompt_logprobs=prompt_lp) for o in results[j].outputs]
        return results  # type: ignore[return-value]


class TaskEngine:
    """Serve one registered task pipeline (e.g. openmind-mm's ``text2image``) to the routes that
    declare the task (:attr:`~openmind.core.specs.RouteSpec.tasks`).

    A route submits ``Job(kind=TASK, prompt=(inputs, params))``; the engine calls
    ``pipeline(inputs, **params)`` on the scheduler's worker thread (one job at a time: the
    scheduler's queue, timeout and cancellation apply) and returns the pipeline's output as
    :attr:`Result.value`, so the route answers exactly what the pipeline returns.
    """

    adapters: tuple[str, ...] = ()
    context_length = None

    def __init__(self, *, name: str, task: str, pipeline: Any) -> None:
        self.name = name
        self.task = task
        self.pipeline = pipeline
        self.kinds = frozenset({task})

    def prepare(self, job: Job) -> int:
        job.prepared = job.prompt
        return 0

    def batch_key(self, job: Job) -> Any:
        return id(job)  # each request alone: its own parameters, seed and size

    def run_batch(self, jobs: list[Job]) -> list[Result | BaseException]:
        from openmind.core.errors import OpenMindError

        out: list[Result | BaseException] = []
        for job in jobs:
            inputs, params = job.prepared
            try:
                out.append(Result(value=self.pipeline(inputs, **params)))
            except OpenMindError as exc:
                out.append(exc)
        return out


def served_tasks() -> dict[str, list[str]]:
    """task -> the registered routes that serve its pipeline (:attr:`RouteSpec.tasks`)."""
    from openmind.core.plugins import get_registry

    registry = get_registry()
    served: dict[str, list[str]] = {}
    for route in registry.routes():
        for task in route.tasks:
            served.setdefault(registry.task(task).name, []).append(route.label())
    return served


def _is_chat(task: str) -> bool:
    """``chat`` and the tasks of other chat wrappers (``mm-chat``: a ``chat``-capable task whose
    wrapper renders messages itself), never the chat-style instruction tasks (summarization ...)."""
    if task == "chat":
        return True
    if not task:
        return False
    from openmind.core.plugins import get_registry

    registry = get_registry()
    return task in registry.tasks_with("chat") and task not in _INSTRUCTION_TASKS


#: chat-capable tasks that are instructions on a chat model, not a conversation API
_INSTRUCTION_TASKS = ("summarization", "translation")


def build_engine(ns: Any) -> PipelineEngine | TaskEngine:
    """Build the engine from resolved unified arguments (``model``, ``template``, ``deploy`` groups)."""
    from openmind.core.api import infer_task
    from openmind.core.errors import OpenMindError
    from openmind.core.pipelines.model import resolve_model_dir as resolve_any
    from openmind.nlp.pipelines.model import resolve_model_dir

    m = ns.model
    # any model layout first (a diffusers folder has no tokenizer at its top): the task decides
    folder = resolve_any(m.model, allow_pickle=m.allow_pickle, revision=m.revision, hub=m.hub)
    common = dict(
        framework=m.framework,
        device=m.device,
        dtype=m.dtype,
        trust_remote_code=m.trust_remote_code,
        allow_pickle=m.allow_pickle,
    )
    try:
        task = infer_task(folder.path)
    except OpenMindError:
        task = "chat"
    from openmind import pipeline

    name = ns.deploy.served_model_name or os.path.basename(os.path.normpath(folder.path))
    served = served_tasks()
    if task not in ("chat", "text-generation", "text2emb") and task in served:
        if m.adapter or ns.deploy.lora_adapters:
            raise S_BAD_ADAPTER.error(
                f"model {m.model!r} is a {task!r} model: LoRA adapters are served for generative models only",
                location="--adapter" if m.adapter else "--lora-adapters",
            )
        return TaskEngine(name=name, task=task, pipeline=pipeline(task, model=folder.path, **common))
    if task not in ("chat", "text-generation", "text2emb") and not _is_chat(task):
        also = "".join(f", {t} ({', '.join(routes)})" for t, routes in sorted(served.items()))
        raise S_NOT_SERVABLE.error(
            f"model {m.model!r} is a {task!r} model; the server serves chat, completions and embeddings{also}"
        )
    folder = resolve_model_dir(folder.path, allow_pickle=m.allow_pickle)  # NLP: a tokenizer too
    if task == "text2emb":
        return PipelineEngine(name=name, embedder=pipeline("text2emb", model=folder.path, **common))
    if task != "chat" and _is_chat(task):
        # another chat wrapper (openmind-mm's mm-chat for vision-language folders): it takes the
        # request's messages as they are (image parts too) and its own serving arguments
        t = ns.template
        generator = pipeline(
            task,
            model=folder.path,
            system=t.system,
            template=t.template,
            model_group=m.model_group,
            adapter=m.adapter,
            **common,
        )
        configure = getattr(generator, "configure_serving", None)
        if configure is not None:
            configure(ns)
        return PipelineEngine(name=name, generator=generator, primary_adapter=bool(m.adapter))
    options: dict[str, Any] = {"adapter": m.adapter, **common}
    t = ns.template
    generator = None
    if task == "chat" or t.template or m.model_group:
        try:
            generator = pipeline(
                "chat", model=folder.path, template=t.template, model_group=m.model_group, system=t.system, **options
            )
        except OpenMindError as exc:
            if not exc.code.startswith("OM-TP") or t.template or m.model_group:
                raise
    if generator is None:  # a base model without a chat template: completions only
        generator = pipeline("text-generation", model=folder.path, **options)
    adapters = {}
    for entry in ns.deploy.lora_adapters:
        adapter, eq, path = entry.partition("=")
        if not eq or not adapter or not path:
            raise S_BAD_ADAPTER.error(f"{entry!r} is not name=FOLDER", location="--lora-adapters")
        adapters[adapter.strip()] = path.strip()
    return PipelineEngine(name=name, generator=generator, adapters=adapters, primary_adapter=bool(m.adapter))
