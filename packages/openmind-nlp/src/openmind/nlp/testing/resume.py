"""The kill-and-resume check every framework's trainer is held to (pt and ms test suites).

A run is started through the real CLI, SIGKILLed as soon as a given checkpoint is complete, left
with a half-written later checkpoint (what a kill while saving leaves), and resumed with
``--resume true``; each suite then compares the result with an uninterrupted run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from openmind.core.training.layout import CHECKPOINT_MARKER


def train_command(model: str | Path, data: str | Path, out: str | Path, *extra: str) -> list[str]:
    """``openmind train`` (full SFT, cosine schedule with warm-up, a log line per step) as argv."""
    return [
        sys.executable,
        "-m",
        "openmind.core.cli.main",
        "train",
        "--model",
        str(model),
        "--dataset",
        str(data),
        "--finetuning-type",
        "full",
        "--output-dir",
        str(out),
        "--learning-rate",
        "3e-3",
        "--lr-scheduler-type",
        "cosine",
        "--warmup-ratio",
        "0.1",
        "--logging-steps",
        "1",
        "--report-to",
        "none",
        "--plot-loss",
        "false",
        *extra,
    ]


def kill_after_checkpoint(
    cmd: list[str], env: dict, run: Path, step: int, timeout: float = 900, *, group: bool = False
) -> None:
    """Start ``cmd`` and SIGKILL it once ``run/checkpoint-<step>`` is complete; assert it was
    killed mid-run (no summary written).

    ``group=True`` kills the launcher and all its descendants at once (torchrun and every worker,
    which torchrun starts in sessions of their own), as a lost machine or a job scheduler's hard
    kill does: the multi-process runs use it (Linux: read from ``/proc``)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = run / f"checkpoint-{step}" / CHECKPOINT_MARKER
    deadline = time.time() + timeout
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    victims = [proc.pid, *descendants(proc.pid)] if group else [proc.pid]
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=60)
    if group:  # the workers are not our children: wait until they are gone
        deadline = time.time() + 60
        while any(is_alive(pid) for pid in victims[1:]) and time.time() < deadline:
            time.sleep(0.05)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert marker.exists() and not (run / "train_summary.json").exists()


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from ``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def is_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def plant_partial_checkpoint(run: Path, step: int) -> Path:
    """What a kill while saving leaves: ``checkpoint-<step>`` with a truncated file and no marker.
    Resume must not pick it, and the resumed run must rewrite it complete."""
    partial = run / f"checkpoint-{step}"
    partial.mkdir(exist_ok=True)
    (partial / "model.safetensors").write_bytes(b"truncated")
    return partial / CHECKPOINT_MARKER


def resume(cmd: list[str], env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run ``cmd --resume true``; assert it succeeded and said where it resumed from."""
    done = subprocess.run([*cmd, "--resume", "true"], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resuming from" in done.stderr
    return done
