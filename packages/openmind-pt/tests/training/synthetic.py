"""Synthetic tasks that the tests generate: digit-string reversal in chat format (sft), the same
mapping as plain text (pt), and preference pairs (dpo / rm)."""

from __future__ import annotations

import json
import random
from pathlib import Path

PROMPT = "Reverse {}"


def digits(rng: random.Random, lo: int = 4, hi: int = 6) -> str:
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(lo, hi)))


def reversal_rows(n: int, seed: int, lo: int = 4, hi: int = 6) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng, lo, hi)
        rows.append(
            {"messages": [{"role": "user", "content": PROMPT.format(s)}, {"role": "assistant", "content": s[::-1]}]}
        )
    return rows


TASKS = {"Reverse": lambda s: s[::-1], "Rotate": lambda s: s[1:] + s[0]}


def task_rows(task: str, n: int, seed: int, length: int = 5) -> list[dict]:
    """``{task} 12345`` -> the digits reversed (``Reverse``) or rotated left by one (``Rotate``)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng, length, length)
        answer = TASKS[task](s)
        rows.append(
            {"messages": [{"role": "user", "content": f"{task} {s}"}, {"role": "assistant", "content": answer}]}
        )
    return rows


def reversal_text_rows(n: int, seed: int, lo: int = 4, hi: int = 6) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        parts = []
        for _ in range(4):
            s = digits(rng, lo, hi)
            parts.append(f"{s} reversed is {s[::-1]}.")
        rows.append({"text": " ".join(parts)})
    return rows


def preference_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        s = digits(rng)
        # a refusal: a preference the model can pick up in a few steps
        wrong = rng.choice(["I cannot reverse that.", "Sorry, I do not know.", "No."])
        rows.append(
            {
                "messages": [{"role": "user", "content": PROMPT.format(s)}],
                "chosen": s[::-1],
                "rejected": wrong,
            }
        )
    return rows


def write_jsonl(path: str | Path, rows: list[dict]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
