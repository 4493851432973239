"""``POST /v1/chat/completions`` (streaming SSE and not; logprobs; tools)."""

from __future__ import annotations

import time
import uuid

from fastapi import Request
from fastapi.responses import JSONResponse

from openmind.nlp.serve.engine import Job
from openmind.nlp.serve.formatting import chat_logprobs, sampling, usage
from openmind.nlp.serve.schemas import ChatCompletionRequest
from openmind.nlp.serve.tools import assistant_message, constraint_for, parser_for


async def handler(request: Request):
    ctx = request.app.state.context
    body: ChatCompletionRequest = await ctx.read_body(request, ChatCompletionRequest)
    ctx.check_kind("chat")
    adapter = ctx.resolve_model(body.model)
    max_tokens = (
        body.max_completion_tokens
        or body.max_tokens
        or min(ctx.settings.default_max_tokens, ctx.settings.limits.max_tokens_cap)
    )
    ctx.limit_checks(body.n, max_tokens)
    logprobs = (body.top_logprobs or 0) if body.logprobs else None
    tools = body.tool_dicts() if body.tool_choice != "none" else None
    parser = parser_for(ctx, tools)
    parallel = body.parallel_tool_calls is not False
    job = Job(
        kind="chat",
        prompt=[m.plain() for m in body.messages],
        sampling=sampling(body, max_tokens, logprobs),
        n=body.n,
        adapter=adapter,
        tools=tools,
        constraint=constraint_for(body, parser),
    )
    await ctx.prepare_async(job, max_tokens_given=bool(body.max_completion_tokens or body.max_tokens))
    model_name = body.model or ctx.settings.served_model_name
    ident = f"chatcmpl-{uuid.uuid4().hex}"
    if body.stream:
        return ctx.stream_response(
            request,
            job,
            ident,
            model_name,
            chat=True,
            include_usage=body.include_usage,
            tool_parser=parser,
            parallel_tool_calls=parallel,
        )
    result = await ctx.run_job(request, job)
    choices = []
    for i, out in enumerate(result.outputs):
        message, finish = assistant_message(out.text, out.finish_reason, parser, parallel)
        choices.append(
            {
                "index": i,
                "message": message,
                "logprobs": {"content": chat_logprobs(out.logprobs)} if body.logprobs else None,
                "finish_reason": finish,
            }
        )
    # already JSON types: straight to JSON (FastAPI would walk it with jsonable_encoder first)
    return JSONResponse(
        {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": choices,
            "usage": usage(job.prompt_tokens, result.outputs),
        }
    )
