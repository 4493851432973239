"""``GET /v1/models``: the served model and its LoRA adapters."""

from __future__ import annotations

from fastapi import Request


async def handler(request: Request):
    ctx = request.app.state.context
    name, created = ctx.settings.served_model_name, ctx.created
    data = [{"id": name, "object": "model", "created": created, "owned_by": "openmind"}]
    data += [
        {"id": adapter, "object": "model", "created": created, "owned_by": "openmind", "parent": name}
        for adapter in ctx.engine.adapters
    ]
    return {"object": "list", "data": data}
