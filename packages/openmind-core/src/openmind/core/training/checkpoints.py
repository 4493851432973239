"""Checkpoint integrity, framework neutral: a ``checkpoint-N/`` is complete only if its marker matches.

Every framework's trainer writes a checkpoint file by file; the completion marker
(:data:`~openmind.core.training.layout.CHECKPOINT_MARKER`) is written last, atomically, and records
the size and SHA-256 of every file. A checkpoint is *intact* when the marker exists and every file it
lists has that size and hash — a truncated ``model.safetensors`` (disk full, a copy cut short) is
caught here, before any framework tries to load it. ``--resume`` takes the newest intact checkpoint
and names the newer ones it skipped and why.

Markers written before sizes/hashes were recorded (a plain ``files`` list) are checked by file
presence only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from openmind.core.training.layout import CHECKPOINT_MARKER, checkpoint_step

__all__ = [
    "Verdict",
    "checkpoints",
    "file_digest",
    "latest_intact",
    "mark_complete",
    "set_aside_broken",
    "verify",
]

_CHUNK = 1 << 20


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file, read in 1 MiB chunks (bounded memory whatever the file size)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


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
    """Flush every file of ``folder``, record its size and hash, then atomically write the marker."""
    folder = Path(folder)
    names = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name not in (CHECKPOINT_MARKER, CHECKPOINT_MARKER + ".tmp")
    )
    sizes: dict[str, int] = {}
    hashes: dict[str, str] = {}
    for name in names:
        with open(folder / name, "rb") as fh:
            os.fsync(fh.fileno())
        sizes[name] = (folder / name).stat().st_size
        hashes[name] = file_digest(folder / name)
    _fsync_dir(folder)
    marker = folder / CHECKPOINT_MARKER
    tmp = folder / (CHECKPOINT_MARKER + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"step": step, "files": names, "sizes": sizes, "sha256": hashes, "time": time.time()}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, marker)
    _fsync_dir(folder)
    return marker


@dataclass
class Verdict:
    """Whether a checkpoint folder can be resumed from; ``problem`` names the file and what is wrong."""

    folder: Path
    intact: bool
    problem: str = ""
    #: a marker exists (the folder was finished, then damaged) as opposed to an interrupted save
    marked: bool = False


def verify(folder: str | os.PathLike, *, hashes: bool = True) -> Verdict:
    """Check ``folder`` against its marker (sizes always, SHA-256 when ``hashes``)."""
    folder = Path(folder)
    marker = folder / CHECKPOINT_MARKER
    if not marker.is_file():
        return Verdict(folder, False, f"no {CHECKPOINT_MARKER} (interrupted while saving)")
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        files = list(data.get("files", []))
        sizes = dict(data.get("sizes", {}))
        digests = dict(data.get("sha256", {}))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        return Verdict(folder, False, f"{CHECKPOINT_MARKER} is unreadable ({exc})", marked=True)
    for name in files:
        path = folder / name
        if not path.is_file():
            return Verdict(folder, False, f"{name} is missing", marked=True)
        if name in sizes and path.stat().st_size != sizes[name]:
            return Verdict(
                folder,
                False,
                f"{name} has {path.stat().st_size} bytes, the marker recorded {sizes[name]} (truncated or replaced)",
                marked=True,
            )
    if hashes:
        for name in files:
            if name in digests and file_digest(folder / name) != digests[name]:
                return Verdict(folder, False, f"{name} does not match its recorded SHA-256 (corrupted)", marked=True)
    return Verdict(folder, True, marked=True)


def checkpoints(output_dir: str | os.PathLike) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every ``checkpoint-N`` in ``output_dir``, oldest first."""
    root = Path(output_dir)
    if not root.is_dir():
        return []
    found = []
    for p in root.iterdir():
        step = checkpoint_step(p)
        if step is not None and p.is_dir():
            found.append((step, p))
    return sorted(found)


def latest_intact(output_dir: str | os.PathLike) -> tuple[Path | None, list[Verdict]]:
    """The newest intact checkpoint and the verdicts of the newer ones that were skipped.

    Verifies newest first and stops at the first intact one, so an ordinary resume hashes one folder.
    """
    skipped: list[Verdict] = []
    for _, folder in reversed(checkpoints(output_dir)):
        verdict = verify(folder)
        if verdict.intact:
            return folder, skipped
        skipped.append(verdict)
    return None, skipped


def set_aside_broken(verdicts: list[Verdict]) -> list[Path]:
    """After a successful fallback: remove interrupted saves, rename damaged ones to ``*.broken-<time>``.

    An interrupted save holds nothing worth keeping; a finished checkpoint that was damaged later is
    kept (renamed, so the resumed run can write ``checkpoint-N`` again) for the user to inspect.
    """
    moved = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for v in verdicts:
        if not v.folder.exists():
            continue
        if v.marked:
            target = v.folder.with_name(f"{v.folder.name}.broken-{stamp}")
            os.replace(v.folder, target)
            moved.append(target)
        else:
            shutil.rmtree(v.folder, ignore_errors=True)
            moved.append(v.folder)
    return moved
