"""Learning-rate schedules as per-step lists (what MindSpore optimizers take as a dynamic rate)."""

from __future__ import annotations

import math

from openmind.core.errors import A_BAD_VALUE

SCHEDULES = ("constant", "constant_with_warmup", "linear", "cosine")


def learning_rates(kind: str, peak: float, total_steps: int, warmup_steps: int = 0) -> list[float]:
    """The rate at each optimizer step 0..total_steps-1, as transformers' schedulers compute it."""
    if kind not in SCHEDULES:
        raise A_BAD_VALUE.error(
            f"lr_scheduler_type {kind!r} is not available on MindSpore (use {', '.join(SCHEDULES)})",
            location="lr_scheduler_type",
        )
    out = []
    for step in range(total_steps):
        if step < warmup_steps:
            out.append(peak * step / max(1, warmup_steps))
            continue
        if kind in ("constant", "constant_with_warmup"):
            out.append(peak)
            continue
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        if kind == "linear":
            out.append(peak * max(0.0, 1.0 - progress))
        else:
            out.append(peak * max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress))))
    return out
