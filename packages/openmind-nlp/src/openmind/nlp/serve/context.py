"""The serving frame: settings, errors, guard and the per-app context every route uses.

A route (registered as a :class:`~openmind.core.specs.RouteSpec`, hook ``openmind_register_routes``)
is ``async def handler(request)``; it finds everything it needs on ``request.app.state.context``
(a :class:`ServeContext`): the engine, the settings, body parsing with OpenAI-style errors, the
request limits, the scheduler and SSE streaming. The built-in OpenAI routes live in
:mod:`openmind.nlp.serve.routes`; a plugin adds its own the same way (see ``docs/EXTENDING.md``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from openmind.core.errors import OpenMindError
from openmind.core.pipelines.base import DEFAULT_MAX_NEW_TOKENS
from openmind.nlp.serve.engine import Engine, Job
from openmind.nlp.serve.formatting import chat_logprobs, completion_logprobs, safe_prefix, sse_error, usage
from openmind.nlp.serve.scheduler import JobTimeout, QueueFull, Scheduler
from openmind.nlp.serve.schemas import Limits, describe_validation_errors, error_body

log = logging.getLogger("openmind.serve")

#: bodies above this many bytes are refused before parsing (413)
MAX_BODY_BYTES = 16 * 1024 * 1024
#: bodies above this many bytes are parsed and validated on a worker thread (the event loop keeps
#: answering other clients while a big body is decoded)
OFF_LOOP_BYTES = 64 * 1024
#: prompts of text jobs up to this many characters (no tools, no image parts) are rendered and
#: tokenized on the event loop: tens of microseconds, less than a hand-off to a worker thread and back
INLINE_PREPARE_CHARS = 4096
#: engine error locations that are request fields (reported as the error's ``param``)
REQUEST_FIELDS = frozenset({"response_format", "tool_choice", "tools", "logit_bias", "prompt", "max_tokens", "seed"})
#: the response header naming top-level request fields that were ignored (not in the schema)
IGNORED_HEADER = "X-OpenMind-Ignored-Fields"


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
    default_max_tokens: int = DEFAULT_MAX_NEW_TOKENS
    #: unknown request fields: 400 (True) or ignored and named in the X-OpenMind-Ignored-Fields header
    strict_schema: bool = False
    #: the resolved ``openmind deploy`` arguments (plugins' argument groups included: a plugin's
    #: route reads its own options with ``arguments.get(key)``); ``None`` when built in code
    arguments: Any = None


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


def check_limits(limits: Limits, n: Any, max_tokens: Any) -> None:
    """The request limits of every server (native app and backend proxy): 400 naming the field."""
    if not isinstance(n, int) or isinstance(n, bool) or not isinstance(max_tokens, int):
        raise ApiError(400, "n and max_tokens must be integers", param="n")
    if n > limits.max_n:
        raise ApiError(400, f"n={n} is over this server's limit of {limits.max_n}", param="n")
    if max_tokens > limits.max_tokens_cap:
        raise ApiError(
            400,
            f"max_tokens={max_tokens} is over this server's limit of {limits.max_tokens_cap}",
            param="max_tokens",
        )


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

    app.add_middleware(_Guard, api_key=settings.api_key)


class _Guard:
    """Pure ASGI middleware (no BaseHTTPMiddleware: it hides client disconnects from the routes, so
    an abandoned non-streaming request would run to its end): the API-key check on every route but
    /health, and the ignored-fields header on responses."""

    def __init__(self, app, api_key: str | None) -> None:
        self.app, self.api_key = app, api_key

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.api_key and scope.get("path") != "/health":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            header = headers.get("authorization", "")
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(token.strip(), self.api_key):
                message = "Incorrect API key provided." if header else "Missing API key (Authorization: Bearer KEY)."
                response = JSONResponse(
                    error_body(message, "invalid_request_error", None, "invalid_api_key"),
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                return await response(scope, receive, send)
        state = scope.setdefault("state", {})

        async def sending(message):
            if message["type"] == "http.response.start" and state.get("ignored_fields"):
                value = ", ".join(state["ignored_fields"]).encode("latin-1", "replace")
                message = {**message, "headers": [*message.get("headers", []), (IGNORED_HEADER.encode(), value)]}
            await send(message)

        started = False

        async def tracking(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await sending(message)

        try:
            await self.app(scope, receive, tracking)
        except ApiError as exc:  # raised before the route's handler could
            if started:
                raise
            await exc.response()(scope, receive, sending)


def _short_text(job: Job) -> bool:
    """Whether ``job`` is a text job whose prompt has at most :data:`INLINE_PREPARE_CHARS` characters
    (token ids count one each), without tools or non-text message parts."""
    if job.kind not in ("chat", "completion", "embedding") or job.tools:
        return False
    prompt = job.prompt
    if isinstance(prompt, str):
        return len(prompt) <= INLINE_PREPARE_CHARS
    total = 0
    for item in prompt if isinstance(prompt, (list, tuple)) else ():
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, int):
            total += 1
        elif isinstance(item, dict):
            for value in item.values():
                if isinstance(value, str):
                    total += len(value)
                elif value is not None:
                    return False  # image parts, tool calls: on a worker thread
        else:
            return False  # token-id lists, anything else: on a worker thread
        if total > INLINE_PREPARE_CHARS:
            return False
    return isinstance(prompt, (list, tuple))


class ServeContext:
    """What routes share: ``request.app.state.context``."""

    def __init__(self, engine: Engine, settings: ServeSettings) -> None:
        self.engine = engine
        self.settings = settings
        self.created = int(time.time())

    async def read_body(self, request: Request, model: type) -> Any:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, f"request body over {MAX_BODY_BYTES} bytes")
        if len(raw) > OFF_LOOP_BYTES:  # decoding megabytes of JSON must not stall other clients
            body, ignored = await asyncio.to_thread(self.parse_body, raw, model)
        else:
            body, ignored = self.parse_body(raw, model)
        if ignored:
            request.state.ignored_fields = ignored
            log.info("%s: ignored request field(s) %s", request.url.path, ", ".join(ignored))
        return body

    def parse_body(self, raw: bytes, model: type) -> tuple[Any, list[str]]:
        """Decode and validate a body; returns it and the top-level fields that were ignored."""
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ApiError(400, f"malformed JSON body: {exc}", code="invalid_json") from None
        if not isinstance(data, dict):
            raise ApiError(400, f"the body must be a JSON object, not {type(data).__name__}", code="invalid_json")
        ignored: list[str] = []
        if not self.settings.strict_schema:
            known = {f.alias or name for name, f in model.model_fields.items()} | set(model.model_fields)
            ignored = sorted(k for k in data if k not in known)
            data = {k: v for k, v in data.items() if k in known}
        try:
            return model.model_validate(data), ignored
        except ValidationError as exc:
            message, param = describe_validation_errors(exc.errors())
            raise ApiError(400, message, param=param, code="invalid_value") from None

    def resolve_model(self, name: str | None) -> str | None:
        """The adapter to use (``None``: the base model); 404 for an unknown name."""
        if name in (None, "", self.settings.served_model_name):
            return None
        if name in self.engine.adapters:
            return name
        known = ", ".join([self.settings.served_model_name, *self.engine.adapters])
        raise ApiError(
            404, f"model {name!r} is not served here (served: {known})", param="model", code="model_not_found"
        )

    def check_kind(self, kind: str) -> None:
        if kind not in self.engine.kinds:
            what = {"embedding": "an embedding model", "chat": "a chat model", "completion": "a causal language model"}
            raise ApiError(
                400,
                f"{self.settings.served_model_name!r} is not {what.get(kind, f'a {kind} model')}; this server offers {', '.join(sorted(self.engine.kinds))}",
                code="unsupported_endpoint",
            )

    def prepare(self, job: Job, *, max_tokens_given: bool = True) -> None:
        """Render / tokenize the job (``engine.prepare``) and check it against the limits and the
        model's context: a prompt over ``max_prompt_tokens`` or ``prompt + max_tokens`` over the
        context is a 400 (``context_length_exceeded``); a ``max_tokens`` the client did not give is
        cut to the room left instead."""
        try:
            job.prompt_tokens = self.engine.prepare(job)
        except OpenMindError as exc:
            located = exc.location in REQUEST_FIELDS or (
                job.kind == "chat" and str(exc.location).startswith("messages[")
            )
            param = exc.location if located else ("messages" if job.kind == "chat" else None)
            raise ApiError(400, f"[{exc.code}] {exc.message}", param=param) from None
        where = "messages" if job.kind == "chat" else ("input" if job.kind == "embedding" else "prompt")
        if job.prompt_tokens > self.settings.limits.max_prompt_tokens:
            raise ApiError(
                400,
                f"the prompt has {job.prompt_tokens} tokens, over this server's limit of "
                f"{self.settings.limits.max_prompt_tokens}",
                param=where,
                code="context_length_exceeded",
            )
        context = getattr(self.engine, "context_length", None)
        if context and job.kind != "embedding":
            room = context - job.prompt_tokens
            if room < 1 and job.sampling.max_tokens > 0:
                raise ApiError(
                    400,
                    f"the prompt has {job.prompt_tokens} tokens; the model's context is {context}: "
                    "no room left to generate",
                    param=where,
                    code="context_length_exceeded",
                )
            if job.sampling.max_tokens > room:
                if max_tokens_given:
                    raise ApiError(
                        400,
                        f"max_tokens={job.sampling.max_tokens} plus the prompt's {job.prompt_tokens} tokens is over "
                        f"the model's context of {context} tokens; ask for at most {room}",
                        param="max_tokens",
                        code="context_length_exceeded",
                    )
                job.sampling = dataclasses.replace(job.sampling, max_tokens=room)

    async def prepare_async(self, job: Job, *, max_tokens_given: bool = True) -> None:
        """:meth:`prepare` on a worker thread: rendering and tokenizing a big prompt must not stall
        the event loop (health checks and other clients' streams keep flowing). A short text prompt
        (:data:`INLINE_PREPARE_CHARS`) is prepared in place: that takes less than the hand-off."""
        if _short_text(job):
            self.prepare(job, max_tokens_given=max_tokens_given)
        else:
            await asyncio.to_thread(self.prepare, job, max_tokens_given=max_tokens_given)

    def limit_checks(self, n: int, max_tokens: int) -> None:
        check_limits(self.settings.limits, n, max_tokens)

    async def run_job(self, request: Request, job: Job):
        scheduler: Scheduler = request.app.state.scheduler
        try:
            task = asyncio.ensure_future(scheduler.run(job))
        except QueueFull as exc:
            raise self.busy(exc) from None
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
            raise self.busy(exc) from None
        except JobTimeout as exc:
            raise ApiError(504, f"request timed out: {exc}", "timeout", code="timeout") from None
        except OpenMindError as exc:
            raise ApiError(400, f"[{exc.code}] {exc.message}") from None

    def busy(self, exc: Exception) -> ApiError:
        return ApiError(
            429,
            f"server busy: {exc}; retry later",
            "rate_limit_exceeded",
            code="queue_full",
            headers={"Retry-After": "1"},
        )

    def stream_response(
        self,
        request: Request,
        job: Job,
        ident: str,
        model_name: str,
        *,
        chat: bool,
        include_usage: bool,
        tool_parser: Any = None,
        parallel_tool_calls: bool = True,
    ):
        scheduler: Scheduler = request.app.state.scheduler
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue = asyncio.Queue()
        job.on_text = lambda index, text: loop.call_soon_threadsafe(deltas.put_nowait, (index, text))
        try:
            future = scheduler.submit(job)  # 429 before the response starts
        except QueueFull as exc:
            raise self.busy(exc) from None
        stops = job.sampling.stop
        created_at = int(time.time())
        kind = "chat.completion.chunk" if chat else "text_completion"

        def chunk(
            index: int, text: str | None = None, finish: str | None = None, role: bool = False, lp=None, calls=None
        ):
            if chat:
                delta: dict[str, Any] = {}
                if role:
                    delta["role"] = "assistant"
                if text is not None:
                    delta["content"] = text
                if calls is not None:
                    delta["tool_calls"] = calls
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
                        safe = safe_prefix(received[index], stops)
                        if tool_parser is not None and tool_parser.may_start(safe):
                            continue  # a tool call may be starting: held until the end, then parsed
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
                        yield sse_error("request timed out", "timeout")
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
                    yield sse_error(message, "server_error")
                    return
                for i, out in enumerate(result.outputs):
                    finish, text, calls = out.finish_reason, out.text, None
                    if tool_parser is not None:
                        from openmind.nlp.serve.tools import assistant_message

                        message, finish = assistant_message(
                            out.text, out.finish_reason, tool_parser, parallel_tool_calls
                        )
                        text = message["content"] or ""
                        calls = message.get("tool_calls")
                    rest = text[len(streamed[i]) :] if text.startswith(streamed[i]) else ""
                    lp = None
                    if job.sampling.logprobs is not None:
                        lp = {"content": chat_logprobs(out.logprobs)} if chat else completion_logprobs(out, False)
                    if rest or lp:
                        yield chunk(i, rest, lp=lp)
                    for k, call in enumerate(calls or []):
                        # OpenAI's shape: index, id, type and the name first, then the arguments
                        head = {**call, "index": k, "function": {"name": call["function"]["name"], "arguments": ""}}
                        yield chunk(i, calls=[head])
                        yield chunk(i, calls=[{"index": k, "function": {"arguments": call["function"]["arguments"]}}])
                    yield chunk(i, None if chat else "", finish=finish)
                if include_usage:
                    tail = {
                        "id": ident,
                        "object": kind,
                        "created": created_at,
                        "model": model_name,
                        "choices": [],
                        "usage": usage(job.prompt_tokens, result.outputs),
                    }
                    yield f"data: {json.dumps(tail)}\n\n"
                yield "data: [DONE]\n\n"
            finally:
                if not future.done():
                    job.cancelled.set()

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
