"""A serving route of the test plugin: ``POST /v1/poems`` on ``openmind deploy``'s server (recipe
"a serving route" of docs/EXTENDING.md). It uses the serving frame's context: body parsing with
OpenAI-style errors, the limits, the scheduler and the served engine."""

from __future__ import annotations

from fastapi import Request
from pydantic import BaseModel, Field

PROMPT = "A poem about {topic}:\n"


class PoemRequest(BaseModel):
    topic: str = Field(min_length=1)
    max_tokens: int = 24


async def handler(request: Request):
    from openmind.nlp.serve.engine import Job, Sampling

    ctx = request.app.state.context
    body: PoemRequest = await ctx.read_body(request, PoemRequest)
    ctx.check_kind("completion")
    ctx.limit_checks(1, body.max_tokens)
    job = Job(
        kind="completion",
        prompt=PROMPT.format(topic=body.topic),
        sampling=Sampling(max_tokens=body.max_tokens, temperature=0.0),
    )
    ctx.prepare(job)
    result = await ctx.run_job(request, job)
    return {"model": ctx.settings.served_model_name, "topic": body.topic, "poem": result.outputs[0].text}
