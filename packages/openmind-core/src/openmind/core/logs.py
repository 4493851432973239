"""Where full error logs go, and the console logger."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from openmind.core.paths import cache_root, log_dir

__all__ = ["cache_root", "log_dir", "logger", "setup_console", "write_log"]

logger = logging.getLogger("openmind")


def write_log(text: str, prefix: str = "error") -> Path | None:
    """Write ``text`` to a new log file and return its path (``None`` if the folder is unwritable)."""
    folder = log_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        path.write_text(text, encoding="utf-8")
        return path
    except OSError:
        return None


def setup_console(verbose: bool = False) -> None:
    if logger.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("[openmind] %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
