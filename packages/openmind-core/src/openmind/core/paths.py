"""Where openmind keeps things on disk (kept import-light: the CLI fast path uses it)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``OPENMIND_CACHE``, else ``~/.cache/openmind``."""
    return Path(os.environ.get("OPENMIND_CACHE") or Path.home() / ".cache" / "openmind")


def log_dir() -> Path:
    return Path(os.environ.get("OPENMIND_LOG_DIR") or cache_root() / "logs")
