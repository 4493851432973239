"""Error codes of the compatibility layer (config dialects, the openMind 1.0 surface)."""

from __future__ import annotations

from openmind.core.errors import ArgumentError, OpenMindError, define


class CompatError(OpenMindError, ImportError):
    """An openMind 1.0 name or feature that 2.x does not honour; names its replacement.

    It is an ``ImportError`` too, so code written for a missing optional name still catches it.
    """

    area = "C"


C_REMOVED = define(
    "OM-C001",
    "openMind 1.0 feature not available in 2.x",
    "Use the 2.x replacement named in the message; docs/MIGRATING.md lists every 1.0 name and its 2.x form.",
    CompatError,
)
C_DIALECT_KEY = define(
    "OM-C002",
    "Configuration key not supported",
    "Remove the key (or set it to the tool's default); the message says what openmind does instead. "
    "docs/MIGRATING.md lists every key of the dialect and its openmind form.",
    ArgumentError,
)
C_UNKNOWN_DIALECT = define(
    "OM-C003",
    "Unknown configuration dialect",
    "`openmind list dialects` shows the registered dialects (e.g. llamafactory, openmind1).",
    ArgumentError,
)
