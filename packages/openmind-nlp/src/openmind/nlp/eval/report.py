"""Evaluation results: a table on screen, ``results.json``, ``results.md`` and per-task samples."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openmind.core.tables import markdown_table, text_table

HEADERS = ["task", "subject", "metric", "score", "n"]


def rows(results: dict[str, Any], subjects: bool = True) -> list[list[Any]]:
    out: list[list[Any]] = []
    for name, task in results["tasks"].items():
        out.append([name, "(all)", task["metric"], round(task["score"], 4), task["n"]])
        if subjects and len(task.get("subjects", {})) > 1:
            for subject, value in sorted(task["subjects"].items()):
                out.append(["", subject, task["metric"], round(value["score"], 4), value["n"]])
    return out


def table(results: dict[str, Any]) -> str:
    return text_table(HEADERS, rows(results))


def markdown(results: dict[str, Any]) -> str:
    head = f"# Evaluation of `{results['model']}`\n\n{results['n_shot']}-shot"
    if results.get("limit"):
        head += f", at most {results['limit']} items per subject"
    if results.get("backend"):
        head += f", backend {results['backend']}"
    return f"{head}.\n\n{markdown_table(HEADERS, rows(results))}\n"


def write(results: dict[str, Any], folder: str | os.PathLike) -> dict[str, Path]:
    """Write ``results.json`` (without samples), ``results.md`` and ``samples_<task>.jsonl``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in results.items() if k != "samples"}
    paths = {"json": folder / "results.json", "markdown": folder / "results.md"}
    paths["json"].write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["markdown"].write_text(markdown(results), encoding="utf-8")
    for task, samples in (results.get("samples") or {}).items():
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task)
        path = folder / f"samples_{safe}.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for sample in samples:
                fh.write(json.dumps(sample, ensure_ascii=False) + "\n")
        paths[f"samples:{task}"] = path
    return paths
