"""Atomic checkpoints: a ``checkpoint-N/`` folder counts only once its completion marker exists.

transformers' Trainer writes a checkpoint file by file (model/adapter, optimizer, scheduler, RNG
of every rank, trainer state incl. the data position). A kill in the middle leaves a folder that
cannot be resumed from. openmind writes :data:`~openmind.core.training.layout.CHECKPOINT_MARKER`
last — after every rank has finished writing, through a temporary file, ``fsync`` and
``os.replace`` — so ``--resume`` can trust exactly the folders that hold it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from openmind.core.training.layout import CHECKPOINT_MARKER, CHECKPOINT_PREFIX

_CKPT_RE = re.compile(rf"^{re.escape(CHECKPOINT_PREFIX)}(\d+)$")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - not every platform opens folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def mark_complete(folder: str | os.PathLike, step: int) -> Path:
    """Flush every file of ``folder`` to disk, then atomically write the completion marker."""
    folder = Path(folder)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    for name in files:
        with open(folder / name, "rb") as fh:
            os.fsync(fh.fileno())
    _fsync_dir(folder)
    marker = folder / CHECKPOINT_MARKER
    tmp = folder / (CHECKPOINT_MARKER + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"step": step, "files": files, "time": time.time()}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, marker)
    _fsync_dir(folder)
    return marker


def is_complete(folder: str | os.PathLike) -> bool:
    folder = Path(folder)
    marker = folder / CHECKPOINT_MARKER
    if not marker.is_file():
        return False
    try:
        files = json.loads(marker.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError):
        return False
    return all((folder / name).is_file() for name in files)


def checkpoints(output_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every ``checkpoint-N`` in ``output_dir``, oldest first."""
    root = Path(output_dir)
    if not root.is_dir():
        return []
    found = []
    for p in root.iterdir():
        m = _CKPT_RE.match(p.name)
        if m and p.is_dir():
            found.append((int(m.group(1)), p))
    return sorted(found)


def latest_complete(output_dir: str | os.PathLike) -> Path | None:
    done = [p for _, p in checkpoints(output_dir) if is_complete(p)]
    return done[-1] if done else None


def remove_incomplete(output_dir: str | os.PathLike) -> list[Path]:
    """Delete checkpoint folders without a valid marker (left by a kill during saving)."""
    removed = []
    for _, p in checkpoints(output_dir):
        if not is_complete(p):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed
