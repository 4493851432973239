"""How a CLI process ends: normally, or without interpreter teardown when a plugin asks for it.

A worker process of ``torchrun`` can be killed by SIGABRT ("terminate called without an active
exception") *after* its work is done and written: ``destroy_process_group()`` unregisters the gloo
group, but the model (FSDP's device mesh, DDP's reducer) still holds the group object, so its C++
worker threads live on into interpreter finalisation, where a thread that needs the GIL to drop a
tensor is ended mid-destructor. The rank then exits with -6 and the launcher fails the whole run.

A plugin that knows its process is in that state calls :func:`leave_promptly` with the reason.
:func:`exit_process` (what ``python -m openmind.core.cli.main`` ends with) then runs every
``atexit`` function while the interpreter is whole (the process group is destroyed there, loggers
and report writers flush), flushes ``sys.stdout``/``sys.stderr`` and leaves through ``os._exit``
with the command's exit code, skipping the teardown in which the threads could abort. Nothing the
command wrote is affected: outputs are closed before the command returns. Without a request the
process ends through ``sys.exit`` as usual, and an SDK caller's process is never ended early.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

__all__ = ["exit_process", "leave_promptly", "prompt_exit_reasons"]

_REASONS: dict[str, None] = {}  # ordered set of the reasons asked for


def leave_promptly(reason: str) -> None:
    """Ask the CLI process to end through ``os._exit`` after its ``atexit`` functions have run."""
    _REASONS[reason] = None


def prompt_exit_reasons() -> list[str]:
    """The reasons given to :func:`leave_promptly` in this process, in order (none: a normal exit)."""
    return list(_REASONS)


def exit_process(code: int) -> NoReturn:
    """End the process with ``code``: ``sys.exit`` unless a prompt exit was asked for (see above)."""
    if not _REASONS:
        sys.exit(code)
    from openmind.core.logs import logger

    logger.debug("leaving without interpreter teardown: %s", "; ".join(_REASONS))
    atexit._run_exitfuncs()  # what the interpreter would run first at exit; each runs once
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more can be written to it
            pass
    os._exit(code)
