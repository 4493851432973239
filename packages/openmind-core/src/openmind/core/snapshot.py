"""An on-disk snapshot of the registry, so the CLI's fast paths import no plugin module.

Building the registry imports every plugin module (and pluggy). The result is pure data, so it
is saved as JSON together with what it was built from: the entry-point fingerprint (each
``sys.path`` directory's mtime, which changes on install/uninstall), the mtime of every
``openmind`` / plugin module file imported while building (editable installs change files, not
directories), the default plugins and the allow/block environment variables. Any difference
and the snapshot is ignored and rebuilt. ``OPENMIND_NO_REGISTRY_CACHE=1`` bypasses it.

Two more things are kept beside the specs, valid under the same key: the commands' names and
help lines (``openmind --help`` reads them without building a registry: no spec classes, no
plugin host), and the status of every requirement string the specs name (``openmind list``
shows them without scanning installed distributions; installing or removing one changes a
``sys.path`` directory's mtime, hence the key).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmind.core.registry import Registry

VERSION = 3


def _path():
    import zlib

    from openmind.core.paths import cache_root

    return cache_root() / "registry" / f"snapshot-{zlib.crc32(sys.executable.encode()):08x}.json"


def _key(defaults: dict[str, str]) -> dict[str, Any]:
    from openmind.core.entrypoints import _fingerprint
    from openmind.core.version import __version__

    return {
        "version": VERSION,
        "core": __version__,
        "entry_points": _fingerprint(),
        "defaults": defaults,
        "env": [os.environ.get("OPENMIND_PLUGINS"), os.environ.get("OPENMIND_DISABLE_PLUGINS")],
    }


def _disabled() -> bool:
    return bool(os.environ.get("OPENMIND_NO_REGISTRY_CACHE"))


@contextlib.contextmanager
def recording() -> Iterator[dict[str, int]]:
    """Record the source files of modules imported inside the block (plus openmind's own)."""
    before = set(sys.modules)
    files: dict[str, int] = {}
    yield files
    for name, module in list(sys.modules.items()):
        if name in before and not name.startswith("openmind"):
            continue
        path = getattr(module, "__file__", None)
        if not path:
            continue
        try:
            files[path] = os.stat(path).st_mtime_ns
        except OSError:
            continue


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def save(registry: Registry, files: dict[str, int], defaults: dict[str, str]) -> None:
    if _disabled():
        return
    from openmind.core.requirements import check

    specs = [spec.to_dict() for kind in registry._specs for spec in registry.all(kind)]
    requirements = sorted({r for kind in registry._specs for spec in registry.all(kind) for r in spec.requires})
    data = {
        "key": _key(defaults),
        "files": files,
        "specs": specs,
        "problems": [
            dict(p.to_dict(), cls=type(p).__name__, component=_component(p.component)) for p in registry.problems
        ],
        "plugins": [p.to_dict() for p in registry.plugin_infos],
        "requirements": {r: [check(r).installed, check(r).satisfied] for r in requirements},
    }
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _component(c: Any) -> dict | None:
    return {"distribution": c.distribution, "version": c.version, "plugin": c.plugin} if c else None


def load_data(defaults: dict[str, str]) -> dict | None:
    """The snapshot as saved (plain JSON data), or ``None`` when absent, stale or unreadable."""
    if _disabled():
        return None
    return _read(defaults)


def _read(defaults: dict[str, str]) -> dict | None:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
        if data["key"] != _key(defaults):
            return None
        for path, mtime in data["files"].items():
            if os.stat(path).st_mtime_ns != mtime:
                return None
        return data
    except (OSError, ValueError, KeyError, TypeError):
        return None


def load(defaults: dict[str, str]) -> Registry | None:
    """The snapshot's registry, or ``None`` when absent, stale or unreadable."""
    data = load_data(defaults)
    if data is None:
        return None
    try:
        registry = _rebuild(data)
    except (ValueError, KeyError, TypeError):
        return None
    from openmind.core.requirements import preload

    preload({r: (v[0], bool(v[1])) for r, v in data.get("requirements", {}).items()})
    return registry


def command_rows(defaults: dict[str, str]) -> list[dict] | None:
    """``[{"name", "aliases", "help", "impl", "requires", "component"}]`` of every command, from a
    valid snapshot (else ``None``), without building a registry (the CLI's parser needs no more)."""
    data = load_data(defaults)
    if data is None:
        return None
    try:
        return [
            {
                "name": s["name"],
                "aliases": list(s.get("aliases", ())),
                "help": s.get("help", ""),
                "impl": s["impl"],
                "requires": list(s.get("requires", ())),
                "component": s.get("component"),
            }
            for s in data["specs"]
            if s["kind"] == "command"
        ]
    except (KeyError, TypeError):
        return None


def _rebuild(data: dict) -> Registry:
    from openmind.core import errors as E
    from openmind.core.errors import Component, OpenMindError
    from openmind.core.plugins import PluginInfo
    from openmind.core.registry import Registry
    from openmind.core.specs import SPEC_KINDS

    registry = Registry()
    for item in data["specs"]:
        item = dict(item)
        cls = SPEC_KINDS[item.pop("kind")]
        comp = item.pop("component", None)
        spec = cls(**{k: _tuples(v) for k, v in item.items()}, component=Component(**comp) if comp else None)
        registry._specs[cls.kind][spec.key] = spec
    for p in data["problems"]:
        cls = getattr(E, p["cls"], OpenMindError)
        err = cls(
            p["code"],
            p["message"],
            hint=p["hint"],
            location=p["location"],
            component=Component(**p["component"]) if p["component"] else None,
        )
        err.title = p.get("title", "")
        registry.problems.append(err)
    for p in data["plugins"]:
        comp = Component(p["distribution"], p["version"], p["name"])
        registry.plugin_infos.append(PluginInfo(p["name"], p["module"], comp, p["loaded"], p["error"]))
        if p["loaded"]:
            registry.plugins[p["name"]] = comp
    return registry
