"""Plugin ``nlp-serve``: the `deploy` verb (registration only)."""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl  # noqa: F401  (hook implementations are added here)
