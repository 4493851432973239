"""``POST /v1/completions`` (echo + logprobs for log-likelihood evaluators; one streamed prompt)."""

from __future__ import annotations

import asyncio
import time
import uuid

from fastapi import Request
from fastapi.responses import JSONResponse

from openmind.nlp.serve.context import ApiError
from openmind.nlp.serve.engine import Job
from openmind.nlp.serve.formatting import COMPLETIONS_DEFAULT_MAX_TOKENS, completion_logprobs, sampling
from openmind.nlp.serve.schemas import CompletionRequest


async def handler(request: Request):
    ctx = request.app.state.context
    body: CompletionRequest = await ctx.read_body(request, CompletionRequest)
    ctx.check_kind("completion")
    adapter = ctx.resolve_model(body.model)
    max_tokens = COMPLETIONS_DEFAULT_MAX_TOKENS if body.max_tokens is None else body.max_tokens
    prompts = body.prompts()
    ctx.limit_checks(body.n, max_tokens)
    if len(prompts) > ctx.settings.max_queue:
        raise ApiError(
            400,
            f"{len(prompts)} prompts in one request, over the queue bound of {ctx.settings.max_queue}",
            param="prompt",
        )
    if body.stream and len(prompts) > 1:
        raise ApiError(400, "streaming supports one prompt per request", param="prompt")
    jobs = []
    for prompt in prompts:
        job = Job(
            kind="completion",
            prompt=prompt,
            sampling=sampling(body, max_tokens, body.logprobs),
            n=body.n,
            echo=body.echo,
            adapter=adapter,
        )
        await ctx.prepare_async(job, max_tokens_given=body.max_tokens is not None)
        jobs.append(job)
    model_name = body.model or ctx.settings.served_model_name
    ident = f"cmpl-{uuid.uuid4().hex}"
    if body.stream:
        return ctx.stream_response(request, jobs[0], ident, model_name, chat=False, include_usage=body.include_usage)
    results = await asyncio.gather(*(ctx.run_job(request, job) for job in jobs))
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
                    "logprobs": completion_logprobs(out, body.echo) if body.logprobs is not None else None,
                    "finish_reason": out.finish_reason,
                }
            )
    # already JSON types: straight to JSON (FastAPI would walk it with jsonable_encoder first)
    return JSONResponse(
        {
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
    )
