"""Processes the page starts: ``openmind train CONFIG.yaml``, ``openmind deploy``, ``openmind eval``,
``openmind pull``.

Each runs in a session of its own (``start_new_session``), with its output in a log file, so
closing the tab, reloading the page or stopping the web UI never stops it. What was started is
written down under ``OUTPUT_ROOT/.openmind-webui/jobs/<kind>-<time>/`` (``job.json``, the log, the
YAML it runs), which is how a fresh page -- or a restarted web UI -- finds it again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from openmind.webui.errors import W_NO_OPENMIND

STATE_DIR = ".openmind-webui"
JOB_FILE = "job.json"
LOG_FILE = "output.log"

#: children started by this process (reaped here; others are found through /proc)
_CHILDREN: dict[int, subprocess.Popen] = {}


@dataclass
class Job:
    id: str
    kind: str
    cmd: list[str]
    pid: int
    started: float
    folder: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def log(self) -> Path:
        return Path(self.folder) / LOG_FILE

    def alive(self) -> bool:
        return alive(self.pid)

    def returncode(self) -> int | None:
        child = _CHILDREN.get(self.pid)
        return child.poll() if child is not None else None


def openmind_exe() -> str:
    """The ``openmind`` script of this environment (beside the interpreter), else the one on PATH."""
    exe = Path(sys.executable).with_name("openmind")
    if exe.exists():
        return str(exe)
    found = shutil.which("openmind")
    if not found:
        raise W_NO_OPENMIND.error(f"no `openmind` script beside {sys.executable} nor on PATH")
    return found


def state_dir(root: str | os.PathLike) -> Path:
    return Path(root) / STATE_DIR / "jobs"


def start(
    root: str | os.PathLike, kind: str, args: list[str], *, files: dict[str, str] | None = None, **meta: Any
) -> Job:
    """Start ``openmind ARGS...`` detached; ``files`` are written to the job folder first and
    ``{folder}`` in ``args`` is replaced by that folder."""
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000:06d}"
    folder = state_dir(root) / f"{kind}-{stamp}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    cmd = [openmind_exe(), *(a.replace("{folder}", str(folder)) for a in args)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    with open(folder / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(Path(root).resolve()),
            env=env,
            start_new_session=True,
        )
    _CHILDREN[proc.pid] = proc
    job = Job(f"{kind}-{stamp}", kind, cmd, proc.pid, time.time(), str(folder), meta)
    (folder / JOB_FILE).write_text(json.dumps(asdict(job), indent=2), encoding="utf-8")
    return job


def alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:  # a zombie, or the pid reused by something that is not openmind
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
        return b"openmind" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: trust kill(0)


def load(folder: Path) -> Job | None:
    try:
        return Job(**json.loads((folder / JOB_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def jobs(root: str | os.PathLike, kind: str | None = None) -> list[Job]:
    """Jobs started from the page (newest first)."""
    base = state_dir(root)
    if not base.is_dir():
        return []
    found = [load(p) for p in base.iterdir() if p.is_dir() and (kind is None or p.name.startswith(kind + "-"))]
    return sorted((j for j in found if j is not None), key=lambda j: j.started, reverse=True)


def stop(job: Job, timeout: float = 15.0) -> bool:
    """SIGTERM the job's process group (the command and its workers), SIGKILL after ``timeout``."""
    if not job.alive():
        return False
    try:
        os.killpg(job.pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not job.alive():
            return True
        time.sleep(0.2)
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def tail(path: str | os.PathLike, lines: int = 40, max_bytes: int = 64 * 1024) -> str:
    """The last ``lines`` lines of a log; progress bars (carriage returns) keep their last state."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    out = []
    for line in _ANSI.sub("", data).split("\n"):
        parts = [p for p in line.split("\r") if p.strip()]
        out.append(parts[-1] if parts else "")
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out[-lines:])
