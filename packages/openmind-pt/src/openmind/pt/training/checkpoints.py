"""Atomic checkpoints: a ``checkpoint-N/`` folder counts only once its completion marker matches.

transformers' Trainer writes a checkpoint file by file (model/adapter, optimizer, scheduler, RNG
of every rank, trainer state incl. the data position). A kill in the middle leaves a folder that
cannot be resumed from, and a file damaged later (disk full, a cut copy) one that fails to load.
openmind writes :data:`~openmind.core.training.layout.CHECKPOINT_MARKER` last — after every rank has
finished writing, through a temporary file, ``fsync`` and ``os.replace`` — recording each file's
size and SHA-256, so ``--resume`` trusts exactly the folders whose files still match
(:mod:`openmind.core.training.checkpoints`, shared by every framework).
"""

from __future__ import annotations

import os
from pathlib import Path

from openmind.core.training.checkpoints import checkpoints, latest_intact, mark_complete, set_aside_broken, verify

__all__ = ["checkpoints", "is_complete", "latest_complete", "mark_complete", "remove_incomplete"]


def is_complete(folder: str | os.PathLike) -> bool:
    return verify(folder).intact


def latest_complete(output_dir: str | os.PathLike) -> Path | None:
    return latest_intact(output_dir)[0]


def remove_incomplete(output_dir: str | os.PathLike) -> list[Path]:
    """Set aside checkpoint folders that do not match their marker (see ``set_aside_broken``)."""
    return set_aside_broken([v for _, p in checkpoints(output_dir) if not (v := verify(p)).intact])
