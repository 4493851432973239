"""openMind 1.0's ``openmind.utils.logging``: verbosity helpers on the ``openmind`` logger.

::

    from openmind.utils import logging
    logging.set_verbosity_info()
    logger = logging.get_logger(__name__)
    logger.info_rank0("printed once, by the main process")
"""

from __future__ import annotations

import logging as _logging
import os
from logging import CRITICAL, DEBUG, ERROR, FATAL, INFO, NOTSET, WARN, WARNING  # noqa: F401 - 1.0 re-exports

ROOT = "openmind"


def _root() -> _logging.Logger:
    return _logging.getLogger(ROOT)


def get_verbosity() -> int:
    return _root().getEffectiveLevel()


def set_verbosity(verbosity: int) -> None:
    _root().setLevel(verbosity)


def set_verbosity_debug() -> None:
    set_verbosity(DEBUG)


def set_verbosity_info() -> None:
    set_verbosity(INFO)


def set_verbosity_warning() -> None:
    set_verbosity(WARNING)


def set_verbosity_error() -> None:
    set_verbosity(ERROR)


def set_verbosity_critical() -> None:
    set_verbosity(CRITICAL)


def _main_process() -> bool:
    return os.environ.get("LOCAL_RANK", "0") in ("0", "-1") and os.environ.get("RANK", "0") in ("0", "-1")


def info_rank0(self: _logging.Logger, *args, **kwargs) -> None:
    if _main_process():
        self.info(*args, **kwargs)


def warning_rank0(self: _logging.Logger, *args, **kwargs) -> None:
    if _main_process():
        self.warning(*args, **kwargs)


# 1.0's loggers had these two methods; so do all loggers once this module is imported (as in 1.0)
_logging.Logger.info_rank0 = info_rank0  # type: ignore[attr-defined]
_logging.Logger.warning_rank0 = warning_rank0  # type: ignore[attr-defined]


def get_logger(name: str | None = None, allow_line_separator: bool = False) -> _logging.Logger:
    """A logger under ``openmind`` (``name`` of a module outside it becomes ``openmind.<name>``)."""
    if not name:
        return _root()
    return _logging.getLogger(name if name == ROOT or name.startswith(ROOT + ".") else f"{ROOT}.{name}")
