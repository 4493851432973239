"""Helpers shared by openmind-data tests."""

import json
from pathlib import Path


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def data_args(**kw):
    from openmind.core.args import DataArguments

    return DataArguments(**kw)


def chat(i: int, turns: int = 1, system: str | None = None) -> dict:
    msgs = [{"role": "system", "content": system}] if system else []
    for t in range(turns):
        msgs.append({"role": "user", "content": f"question {i}.{t}: what is {i} plus {t}?"})
        msgs.append({"role": "assistant", "content": f"{i} plus {t} is {i + t}."})
    return {"messages": msgs}


def poems_to_messages(row: dict) -> dict:
    """A plugin-style converter (rows ``topic``/``poem``), registered by test_plugin_format.py."""
    if not row.get("poem"):
        raise ValueError("poem: must be a non-empty string")
    return {
        "messages": [
            {"role": "user", "content": f"Write a poem about {row['topic']}."},
            {"role": "assistant", "content": row["poem"]},
        ]
    }
