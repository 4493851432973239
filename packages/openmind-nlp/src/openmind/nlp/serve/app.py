"""The OpenAI-compatible ASGI app (FastAPI) of the native backend.

Routes: ``GET /health`` (never needs the key), ``GET /v1/models``, ``POST /v1/chat/completions``
(streaming SSE and not), ``POST /v1/completions`` (echo + logprobs for log-likelihood evaluators),
``POST /v1/embeddings``. Errors use OpenAI's body ``{"error": {message, type, param, code}}``;
clients never see a traceback (it goes to the server log).

Example::

    from openmind.nlp.serve.app import create_app
    app = create_app(engine, api_key="sk-local")   # then: uvicorn.run(app, host="127.0.0.1")
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import secrets
import struct
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from openmind.core.errors import OpenMindError
from openmind.nlp.serve.engine import Engine, Job, Output, Sampling, TokenLogprob
from openmind.nlp.serve.scheduler import JobTimeout, QueueFull, Scheduler
from openmind.nlp.serve.schemas import (
    ChatCompletionRequest,
    CompletionRequest,
    EmbeddingRequest,
    Limits,
    describe_validation_errors,
    error_body,
)

log = logging.getLogger("openmind.serve")

#: bodies above this many bytes are refused before parsing (413)
MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass
class ServeSettings:
    """What ``openmind deploy`` passes to :func:`create_app` (the ``deploy`` argument group)."""

    served_model_name: str = "model"
    api_key: str | None = None
    limits: Limits = field(default_factory=Limits)
    max_batch_size: int = 8
    batch_wait_ms: float = 5.0
    max_queue: int = 256
    request_timeout: float = 300.0
    #: max_tokens when a chat request does not say (OpenAI: "up to the context"); capped by max_tokens_cap
    default_max_tokens: int = 512


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type_, param, code
        self.headers = headers

    def response(self) -> JSONResponse:
        return JSONResponse(
            error_body(self.message, self.type, self.param, self.code), status_code=self.status, headers=self.headers
        )


class ClientGone(Exception):
    """The client disconnected while its request waited or ran."""


def create_guard(app: FastAPI, settings: ServeSettings) -> None:
    """OpenAI-style error bodies (no tracebacks) and the API-key check on every route but /health."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return JSONResponse(error_body(str(exc.detail), kind), status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse(
            error_body("internal server error (details are in the server log)", "server_error"), status_code=500
        )

    @app.middleware("http")
    async def _auth(request: Request, call_next):
        if settings.api_key and request.url.path != "/health":
            header = request.headers.get("authorization", "")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(token.strip(), settings.api_key):
                message = "Incorrect API key provided." if header else "Missing API key (Authorization: Bearer KEY)."
                return JSONResponse(
                    error_body(message, "invalid_request_error", None, "invalid_api_key"),
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
        try:
            return await call_next(request)
        except ApiError as exc:  # raised before the route's handler could
            return exc.response()


def create_app(engine: Engine, settings: ServeSettings | None = None) -> FastAPI:
    """Build the ASGI app serving ``engine``. The scheduler starts with the app's lifespan."""
    from contextlib import asynccontextmanager

    settings = settings or ServeSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        scheduler = Scheduler(
            engine,
            max_batch_size=settings.max_batch_size,
            batch_wait_ms=settings.batch_wait_ms,
            max_queue=settings.max_queue,
            timeout=settings.request_timeout,
        )
        scheduler.start()
        app.state.scheduler = scheduler
        try:
            yield
        finally:
            await scheduler.stop()

    app = FastAPI(title="openmind", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.engine = engine
    app.state.settings = settings
    created = int(time.time())

    create_guard(app, settings)

    async def read_body(request: Request, model: type) -> Any:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ApiError(400, f"malformed JSON body: {exc}", code="invalid_json") from None
        if not isinstance(data, dict):
            raise ApiError(400, f"the body must be a JSON object, not {type(data).__name__}", code="invalid_json")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            message, param = describe_validation_errors(exc.errors())
            raise ApiError(400, message, param=param, code="invalid_value") from None

    def resolve_model(name: str | None) -> str | None:
        """The adapter to use (``None``: the base model); 404 for an unknown name."""
        if name in (None, "", settings.served_model_name):
            return None
        if name in engine.adapters:
            return name
        known = ", ".join([settings.served_model_name, *engine.adapters])
        raise ApiError(
            404, f"model {name!r} is not served here (served: {known})", param="model", code="model_not_found"
        )

    def check_kind(kind: str) -> None:
        if kind not in engine.kinds:
            what = {"embedding": "an embedding model", "chat": "a chat model", "completion": "a causal language model"}
            raise ApiError(
                400,
                f"{settings.served_model_name!r} is not {what[kind]}; this server offers {', '.join(sorted(engine.kinds))}",
                code="unsupported_endpoint",
            )

    def prepare(job: Job) -> None:
        try:
            job.prompt_tokens = engine.prepare(job)
        except OpenMindError as exc:
            raise ApiError(
                400, f"[{exc.code}] {exc.message}", param="messages" if job.kind == "chat" else None
            ) from None
        if job.prompt_tokens > settings.limits.max_prompt_tokens:
            raise ApiError(
                400,
                f"the prompt has {job.prompt_tokens} tokens, over this server's limit of "
                f"{settings.limits.max_prompt_tokens}",
                param="messages" if job.kind == "chat" else "prompt",
                code="context_length_exceeded",
            )

    def limit_checks(n: int, max_tokens: int) -> None:
        if n > settings.limits.max_n:
            raise ApiError(400, f"n={n} is over this server's limit of {settings.limits.max_n}", param="n")
        if max_tokens > settings.limits.max_tokens_cap:
            raise ApiError(
                400,
                f"max_tokens={max_tokens} is over this server's limit of {settings.limits.max_tokens_cap}",
                param="max_tokens",
            )

    async def run_job(request: Request, job: Job):
        scheduler: Scheduler = request.app.state.scheduler
        try:
            task = asyncio.ensure_future(scheduler.run(job))
        except QueueFull as exc:
            raise busy(exc) from None
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=0.5)
                if done:
                    return task.result()
                if await request.is_disconnected():
                    job.cancelled.set()
                    task.cancel()
                    raise ClientGone()
        except QueueFull as exc:
            raise busy(exc) from None
        except JobTimeout as exc:
            raise ApiError(504, f"request timed out: {exc}", "timeout", code="timeout") from None
        except OpenMindError as exc:
            raise ApiError(400, f"[{exc.code}] {exc.message}") from None

    def busy(exc: Exception) -> ApiError:
        return ApiError(
            429,
            f"server busy: {exc}; retry later",
            "rate_limit_exceeded",
            code="queue_full",
            headers={"Retry-After": "1"},
        )

    # ---- routes ----------------------------------------------------------------------------

    @app.get("/health")
    async def health(request: Request):
        scheduler = getattr(request.app.state, "scheduler", None)
        stats = scheduler.stats if scheduler else None
        return {
            "status": "ok",
            "model": settings.served_model_name,
            "queued": scheduler.queued if scheduler else 0,
            "batches": stats.batches if stats else 0,
            "requests": stats.jobs if stats else 0,
            "largest_batch": stats.largest_batch if stats else 0,
        }

    @app.get("/v1/models")
    async def models():
        data = [{"id": settings.served_model_name, "object": "model", "created": created, "owned_by": "openmind"}]
        data += [
            {
                "id": name,
                "object": "model",
                "created": created,
                "owned_by": "openmind",
                "parent": settings.served_model_name,
            }
            for name in engine.adapters
        ]
        return {"object": "list", "data": data}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        body: ChatCompletionRequest = await read_body(request, ChatCompletionRequest)
        check_kind("chat")
        adapter = resolve_model(body.model)
        max_tokens = (
            body.max_completion_tokens
            or body.max_tokens
            or min(settings.default_max_tokens, settings.limits.max_tokens_cap)
        )
        limit_checks(body.n, max_tokens)
        logprobs = (body.top_logprobs or 0) if body.logprobs else None
        job = Job(
            kind="chat",
            prompt=[m.plain() for m in body.messages],
            sampling=_sampling(body, max_tokens, logprobs),
            n=body.n,
            adapter=adapter,
            tools=body.tools if body.tool_choice != "none" else None,
        )
        prepare(job)
        model_name = body.model or settings.served_model_name
        ident = f"chatcmpl-{uuid.uuid4().hex}"
        if body.stream:
            return stream_response(request, job, ident, model_name, chat=True, include_usage=body.include_usage)
        result = await run_job(request, job)
        choices = []
        for i, out in enumerate(result.outputs):
            choices.append(
                {
                    "index": i,
                    "message": {"role": "assistant", "content": out.text},
                    "logprobs": {"content": _chat_logprobs(out.logprobs)} if body.logprobs else None,
                    "finish_reason": out.finish_reason,
                }
            )
        return {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": choices,
            "usage": _usage(job.prompt_tokens, result.outputs),
        }

    @app.post("/v1/completions")
    async def completions(request: Request):
        body: CompletionRequest = await read_body(request, CompletionRequest)
        check_kind("completion")
        adapter = resolve_model(body.model)
        max_tokens = 16 if body.max_tokens is None else body.max_tokens
        prompts = body.prompts()
        limit_checks(body.n, max_tokens)
        if len(prompts) > settings.max_queue:
            raise ApiError(
                400,
                f"{len(prompts)} prompts in one request, over the queue bound of {settings.max_queue}",
                param="prompt",
            )
        if body.stream and len(prompts) > 1:
            raise ApiError(400, "streaming supports one prompt per request", param="prompt")
        jobs = []
        for prompt in prompts:
            job = Job(
                kind="completion",
                prompt=prompt,
                sampling=_sampling(body, max_tokens, body.logprobs),
                n=body.n,
                echo=body.echo,
                adapter=adapter,
            )
            prepare(job)
            jobs.append(job)
        model_name = body.model or settings.served_model_name
        ident = f"cmpl-{uuid.uuid4().hex}"
        if body.stream:
            return stream_response(request, jobs[0], ident, model_name, chat=False, include_usage=body.include_usage)
        results = await asyncio.gather(*(run_job(request, job) for job in jobs))
        choices = []
        prompt_tokens = completion_tokens = 0
        for job, result in zip(jobs, results):
            prompt_tokens += job.prompt_tokens
            for out in result.outputs:
                completion_tokens += out.completion_tokens
                prompt_text = "".join(t.token for t in out.prompt_logprobs) if body.echo and out.prompt_logprobs else ""
                if body.echo and not out.prompt_logprobs:
                    prompt_text = job.prompt if isinstance(job.prompt, str) else ""
                choices.append(
                    {
                        "index": len(choices),
                        "text": prompt_text + out.text,
                        "logprobs": _completion_logprobs(out, body.echo) if body.logprobs is not None else None,
                        "finish_reason": out.finish_reason,
                    }
                )
        return {
            "id": ident,
            "object": "text_completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @app.post("/v1/embeddings")
    async def embeddings(request: Request):
        body: EmbeddingRequest = await read_body(request, EmbeddingRequest)
        check_kind("embedding")
        resolve_model(body.model)
        job = Job(kind="embedding", prompt=body.inputs())
        prepare(job)
        result = await run_job(request, job)
        data = []
        for i, vector in enumerate(result.embeddings):
            if body.encoding_format == "base64":
                value: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
            else:
                value = vector
            data.append({"object": "embedding", "index": i, "embedding": value})
        return {
            "object": "list",
            "data": data,
            "model": body.model or settings.served_model_name,
            "usage": {"prompt_tokens": job.prompt_tokens, "total_tokens": job.prompt_tokens},
        }

    # ---- streaming -------------------------------------------------------------------------

    def stream_response(request: Request, job: Job, ident: str, model_name: str, *, chat: bool, include_usage: bool):
        scheduler: Scheduler = request.app.state.scheduler
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue = asyncio.Queue()
        job.on_text = lambda index, text: loop.call_soon_threadsafe(deltas.put_nowait, (index, text))
        try:
            future = scheduler.submit(job)  # 429 before the response starts
        except QueueFull as exc:
            raise busy(exc) from None
        stops = job.sampling.stop
        created_at = int(time.time())
        kind = "chat.completion.chunk" if chat else "text_completion"

        def chunk(index: int, text: str | None = None, finish: str | None = None, role: bool = False, lp=None):
            if chat:
                delta: dict[str, Any] = {}
                if role:
                    delta["role"] = "assistant"
                if text is not None:
                    delta["content"] = text
                choice: dict[str, Any] = {"index": index, "delta": delta, "logprobs": lp, "finish_reason": finish}
            else:
                choice = {"index": index, "text": text or "", "logprobs": lp, "finish_reason": finish}
            payload = {"id": ident, "object": kind, "created": created_at, "model": model_name, "choices": [choice]}
            return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

        async def events():
            streamed = [""] * job.n
            received = [""] * job.n
            deadline = time.monotonic() + scheduler.timeout if scheduler.timeout else None
            try:
                if chat:
                    for i in range(job.n):
                        yield chunk(i, "", role=True)
                while True:
                    getter = asyncio.ensure_future(deltas.get())
                    wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
                    done, _ = await asyncio.wait({getter, future}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                    if getter in done:
                        index, text = getter.result()
                        received[index] += text
                        safe = _safe_prefix(received[index], stops)
                        if len(safe) > len(streamed[index]):
                            piece = safe[len(streamed[index]) :]
                            streamed[index] = safe
                            yield chunk(index, piece)
                        continue
                    getter.cancel()
                    if future.done():
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        job.cancelled.set()
                        yield _sse_error("request timed out", "timeout")
                        return
                    if await request.is_disconnected():
                        job.cancelled.set()
                        return
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - reported in the stream, details in the log
                    if not isinstance(exc, OpenMindError):
                        log.exception("streaming job failed")
                    message = f"[{exc.code}] {exc.message}" if isinstance(exc, OpenMindError) else "internal error"
                    yield _sse_error(message, "server_error")
                    return
                for i, out in enumerate(result.outputs):
                    rest = out.text[len(streamed[i]) :] if out.text.startswith(streamed[i]) else ""
                    lp = None
                    if job.sampling.logprobs is not None:
                        lp = {"content": _chat_logprobs(out.logprobs)} if chat else _completion_logprobs(out, False)
                    if rest or lp:
                        yield chunk(i, rest, lp=lp)
                    yield chunk(i, None if chat else "", finish=out.finish_reason)
                if include_usage:
                    usage = {
                        "id": ident,
                        "object": kind,
                        "created": created_at,
                        "model": model_name,
                        "choices": [],
                        "usage": _usage(job.prompt_tokens, result.outputs),
                    }
                    yield f"data: {json.dumps(usage)}\n\n"
                yield "data: [DONE]\n\n"
            finally:
                if not future.done():
                    job.cancelled.set()

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return app


# ---- helpers ---------------------------------------------------------------------------------


def _sampling(body: Any, max_tokens: int, logprobs: int | None) -> Sampling:
    return Sampling(
        max_tokens=max_tokens,
        temperature=1.0 if body.temperature is None else float(body.temperature),
        top_p=1.0 if body.top_p is None else float(body.top_p),
        seed=body.seed,
        stop=tuple(body.stop or ()),
        logprobs=logprobs,
    )


def _safe_prefix(text: str, stops: tuple[str, ...]) -> str:
    """The part of ``text`` that can be streamed: up to a stop string, minus a tail that may begin one."""
    if not stops:
        return text
    cut = len(text)
    for stop in stops:
        at = text.find(stop)
        if at != -1:
            cut = min(cut, at)
            continue
        for k in range(min(len(stop) - 1, len(text)), 0, -1):
            if text.endswith(stop[:k]):
                cut = min(cut, len(text) - k)
                break
    return text[:cut]


def _sse_error(message: str, type_: str) -> str:
    return f"data: {json.dumps(error_body(message, type_))}\n\n"


def _usage(prompt_tokens: int, outputs: list[Output]) -> dict[str, int]:
    completion = sum(o.completion_tokens for o in outputs)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens + completion}


def _token_bytes(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def _chat_logprobs(items: list[TokenLogprob] | None) -> list[dict[str, Any]]:
    out = []
    for t in items or []:
        out.append(
            {
                "token": t.token,
                "logprob": t.logprob,
                "bytes": _token_bytes(t.token),
                "top_logprobs": [{"token": s, "logprob": lp, "bytes": _token_bytes(s)} for s, lp in t.top],
            }
        )
    return out


def _completion_logprobs(out: Output, echo: bool) -> dict[str, Any]:
    items = [*(out.prompt_logprobs or [] if echo else []), *(out.logprobs or [])]
    tokens, token_logprobs, top, offsets = [], [], [], []
    offset = 0
    for t in items:
        tokens.append(t.token)
        token_logprobs.append(t.logprob)
        top.append(dict(t.top) if t.logprob is not None else None)
        offsets.append(offset)
        offset += len(t.token)
    return {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top, "text_offset": offsets}
