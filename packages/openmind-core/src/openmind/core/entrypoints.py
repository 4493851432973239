"""Fast discovery of the ``openmind`` entry points.

Reading every installed distribution's ``entry_points.txt`` costs ~0.1 s in a large venv, which
would dominate ``openmind list`` / ``openmind --help``. The result is cached on disk, keyed by a
fingerprint of ``sys.path`` (each directory's mtime changes when a distribution is installed or
removed there), so the cache is never stale after ``pip install`` / ``uninstall``.
Set ``OPENMIND_NO_ENTRY_POINT_CACHE=1`` to bypass it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import NamedTuple

#: plugins every host loads before the entry points (core's own specs register through the same hooks)
DEFAULT_PLUGINS = {"core": "openmind.core.builtins", "core-hub": "openmind.core.hub.plugin"}


class EntryPointInfo(NamedTuple):
    # a NamedTuple, not a dataclass: the CLI's fast path must not pay for importing dataclasses
    name: str
    value: str
    distribution: str
    version: str


def _fingerprint() -> str:
    parts = [sys.executable]
    for i, entry in enumerate(sys.path):
        # sys.path[0] is the script's folder or the current directory (python -c / -m): it changes
        # with how openmind is started and never holds the installed distributions.
        if not entry or (i == 0 and "-packages" not in entry):
            continue
        try:
            parts.append(f"{entry}={os.stat(entry or '.').st_mtime_ns}")
        except OSError:
            continue
    return "\n".join(parts)


def _scan(group: str) -> list[EntryPointInfo]:
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=group):
        dist = ep.dist
        found.append(EntryPointInfo(ep.name, ep.value, dist.name if dist else ep.name, dist.version if dist else ""))
    return sorted(found, key=lambda e: e.name)


def discover(group: str) -> list[EntryPointInfo]:
    if os.environ.get("OPENMIND_NO_ENTRY_POINT_CACHE"):
        return _scan(group)
    import zlib

    from openmind.core.paths import cache_root

    fingerprint = _fingerprint()
    key = f"{zlib.crc32(sys.executable.encode()):08x}"
    path = cache_root() / "entry_points" / f"{group}-{key}.json"
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached["fingerprint"] == fingerprint:
            return [EntryPointInfo(**item) for item in cached["entry_points"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    found = _scan(group)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(
            json.dumps({"fingerprint": fingerprint, "entry_points": [e._asdict() for e in found]}), encoding="utf-8"
        )
        os.replace(tmp, path)
    except OSError:
        pass
    return found
