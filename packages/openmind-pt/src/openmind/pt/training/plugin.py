"""Plugin ``pt-training``: PyTorch trainers (registration only; imports no torch)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl  # noqa: F401  (hook implementations are added here)
