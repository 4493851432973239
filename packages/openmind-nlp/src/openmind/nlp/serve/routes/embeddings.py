"""``POST /v1/embeddings`` (float or base64 vectors)."""

from __future__ import annotations

import base64
import struct
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from openmind.nlp.serve.engine import Job
from openmind.nlp.serve.schemas import EmbeddingRequest


async def handler(request: Request):
    ctx = request.app.state.context
    body: EmbeddingRequest = await ctx.read_body(request, EmbeddingRequest)
    ctx.check_kind("embedding")
    ctx.resolve_model(body.model)
    job = Job(kind="embedding", prompt=body.inputs())
    await ctx.prepare_async(job)
    result = await ctx.run_job(request, job)
    data = []
    for i, vector in enumerate(result.embeddings):
        if body.encoding_format == "base64":
            value: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        else:
            value = vector
        data.append({"object": "embedding", "index": i, "embedding": value})
    # already JSON types: straight to JSON (FastAPI would walk it with jsonable_encoder first)
    return JSONResponse(
        {
            "object": "list",
            "data": data,
            "model": body.model or ctx.settings.served_model_name,
            "usage": {"prompt_tokens": job.prompt_tokens, "total_tokens": job.prompt_tokens},
        }
    )
