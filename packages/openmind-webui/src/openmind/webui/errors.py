"""Error codes of the web UI (``OM-S1xx``: it is a server the user starts)."""

from __future__ import annotations

from openmind.core.errors import ServingError, define

W_NO_PASSWORD = define(
    "OM-S101",
    "Web UI bound beyond loopback without a password",
    "Bind to 127.0.0.1 (the default), or pass --share-password PASSWORD (or set OPENMIND_WEBUI_PASSWORD) "
    "so that the page asks for it.",
    ServingError,
)
W_NO_OPENMIND = define(
    "OM-S102",
    "The openmind command is not found",
    "The page starts `openmind train/deploy/eval/pull` as processes: install openmind in the environment the "
    "web UI runs from (its bin folder holds the `openmind` script), or put `openmind` on PATH.",
    ServingError,
)
