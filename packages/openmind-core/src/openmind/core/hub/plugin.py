"""Core plugin ``core-hub``: the hubs and the hub verbs (registration only; clients load lazily)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl  # noqa: F401  (hook implementations are added here)
