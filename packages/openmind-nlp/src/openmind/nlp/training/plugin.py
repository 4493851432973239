"""Plugin ``nlp-training``: trainer wrappers and training verbs (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl  # noqa: F401  (hook implementations are added here)
