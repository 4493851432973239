"""Plugin ``nlp-eval``: the `eval` verb and evaluation tasks (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl  # noqa: F401  (hook implementations are added here)
