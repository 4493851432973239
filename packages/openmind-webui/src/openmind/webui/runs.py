"""Training runs under an output root: the ones the page started and the ones started from the CLI.

A run folder is recognised by what ``openmind train`` writes into it (the run-folder contract of
openmind's trainers): ``openmind_args.yaml`` (before the first step), TensorBoard events under
``runs/`` (while it trains), ``checkpoint-N/trainer_state.json`` and ``train_summary.json`` (at
the end). The loss curve is read from the TensorBoard events while a run trains and from
``train_summary.json`` once it is done; progress and ETA from the run's progress bar when the page
started it, else from the newest step logged.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmind.core import args as A
from openmind.webui import jobs as J

SUMMARY_FILE = "train_summary.json"
STATE_FILE = "trainer_state.json"
#: how deep under the output root run folders are looked for
MAX_DEPTH = 3
#: a run without a live process counts as running (started elsewhere) while its events are this fresh
FRESH_SECONDS = 90.0

_PROGRESS = re.compile(r"(\d+)/(\d+) \[([0-9:]+)<([0-9:?]+)")


@dataclass
class Run:
    path: Path
    status: str  # running, finished, stopped
    job: J.Job | None = None
    args: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    updated: float = 0.0

    @property
    def label(self) -> str:
        return str(self.path)


def _is_run(folder: Path) -> bool:
    return (folder / A.ARGS_FILE).is_file() or (folder / SUMMARY_FILE).is_file()


def _events(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("events.out.tfevents.*") if "checkpoint-" not in str(p.relative_to(folder)))


def discover(root: str | os.PathLike) -> list[Run]:
    """Every run folder under ``root`` (depth <= MAX_DEPTH) plus every run the page started, newest first."""
    root = Path(root)
    found: dict[Path, Run] = {}
    train_jobs = {
        Path(j.meta["run_dir"]).resolve(): j for j in reversed(J.jobs(root, "train")) if j.meta.get("run_dir")
    }
    candidates: set[Path] = set(train_jobs)
    if root.is_dir():
        stack = [(root, 0)]
        while stack:
            folder, depth = stack.pop()
            if folder.name == J.STATE_DIR or folder.name.startswith("checkpoint-"):
                continue
            if _is_run(folder):
                candidates.add(folder.resolve())
                continue
            if depth < MAX_DEPTH:
                try:
                    stack += [(p, depth + 1) for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
                except OSError:
                    pass
    for path in candidates:
        found[path] = inspect(path, train_jobs.get(path))
    return sorted(found.values(), key=lambda r: r.updated, reverse=True)


def inspect(path: Path, job: J.Job | None = None) -> Run:
    args: dict[str, Any] = {}
    try:
        args = A.load_run(path) or {}
    except Exception:  # noqa: BLE001 - a half-written file: shown as unknown
        args = {}
    summary = None
    if (path / SUMMARY_FILE).is_file():
        try:
            summary = json.loads((path / SUMMARY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            summary = None
    stamps = [p.stat().st_mtime for p in [path / A.ARGS_FILE, path / SUMMARY_FILE, *_events(path)] if p.exists()]
    if job is not None:
        stamps.append(job.started)
        if job.log.exists():
            stamps.append(job.log.stat().st_mtime)
    updated = max(stamps, default=0.0)
    if job is not None and job.alive():
        status = "running"
    elif summary is not None:
        status = "finished"
    elif job is None and time.time() - updated < FRESH_SECONDS:
        status = "running"
    else:
        status = "stopped"
    return Run(path, status, job, args, summary, updated)


def loss_points(run: Run) -> list[tuple[int, float]]:
    """(step, training loss) logged so far."""
    if run.summary and run.summary.get("history"):
        points = [(int(h["step"]), float(h["loss"])) for h in run.summary["history"] if "loss" in h and "step" in h]
        if points:
            return points
    points = _tensorboard_scalars(run.path, ("train/loss", "loss"))
    if points:
        return points
    return _checkpoint_history(run.path)


def _tensorboard_scalars(folder: Path, tags: tuple[str, ...]) -> list[tuple[int, float]]:
    files = _events(folder)
    if not files:
        return []
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
        from tensorboard.util import tensor_util
    except ImportError:
        return []
    by_step: dict[int, float] = {}
    for path in files:
        try:
            for event in EventFileLoader(str(path)).Load():
                for value in event.summary.value:
                    if value.tag not in tags:
                        continue
                    if value.HasField("simple_value"):
                        by_step[int(event.step)] = float(value.simple_value)
                    elif value.HasField("tensor"):
                        by_step[int(event.step)] = float(tensor_util.make_ndarray(value.tensor).item())
        except Exception:  # noqa: BLE001 - a file being written: read what is complete
            continue
    return sorted(by_step.items())


def _checkpoint_history(folder: Path) -> list[tuple[int, float]]:
    states = sorted(folder.glob(f"checkpoint-*/{STATE_FILE}"), key=lambda p: p.stat().st_mtime)
    if not states:
        return []
    try:
        history = json.loads(states[-1].read_text(encoding="utf-8")).get("log_history", [])
    except (OSError, ValueError):
        return []
    return [(int(h["step"]), float(h["loss"])) for h in history if "loss" in h and "step" in h]


@dataclass
class Progress:
    step: int | None = None
    total: int | None = None
    elapsed: str = ""
    eta: str = ""

    @property
    def fraction(self) -> float | None:
        if self.step is None or not self.total:
            return None
        return min(1.0, self.step / self.total)


def progress(run: Run, points: list[tuple[int, float]]) -> Progress:
    """Step / total and ETA: from the progress bar in the log of a run the page started, else the
    newest logged step and ``max_steps``."""
    if run.summary:
        step = int(run.summary.get("global_step") or (points[-1][0] if points else 0))
        return Progress(step, step, f"{run.summary.get('seconds', 0):.0f}s", "0s")
    if run.job is not None:
        text = J.tail(run.job.log, lines=5)
        matches = _PROGRESS.findall(text)
        if matches:
            step, total, elapsed, eta = matches[-1]
            return Progress(int(step), int(total), elapsed, eta)
    max_steps = int(run.args.get("max_steps") or -1)
    return Progress(points[-1][0] if points else None, max_steps if max_steps > 0 else None)
