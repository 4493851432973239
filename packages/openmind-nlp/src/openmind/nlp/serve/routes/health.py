"""``GET /health``: liveness and scheduler counters (never needs the API key)."""

from __future__ import annotations

from fastapi import Request


async def handler(request: Request):
    ctx = request.app.state.context
    scheduler = getattr(request.app.state, "scheduler", None)
    stats = scheduler.stats if scheduler else None
    return {
        "status": "ok",
        "model": ctx.settings.served_model_name,
        "queued": scheduler.queued if scheduler else 0,
        "batches": stats.batches if stats else 0,
        "requests": stats.jobs if stats else 0,
        "largest_batch": stats.largest_batch if stats else 0,
        # seconds the engine ran batches / the batcher held jobs back to fill a batch
        "busy_seconds": round(stats.busy_seconds, 4) if stats else 0.0,
        "wait_seconds": round(stats.wait_seconds, 4) if stats else 0.0,
    }
