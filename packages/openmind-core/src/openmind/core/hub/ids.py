"""Hub ids (``hf::org/name``), hub choice, and the path-safety rule for file names from a hub."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from openmind.core.hub.errors import H_BAD_ID, H_UNKNOWN_HUB, H_UNSAFE_PATH

#: the hub used when neither --hub, an id prefix nor OPENMIND_HUB names one (openMind's own hub).
DEFAULT_HUB = "modelers"
_PART = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_REPO_RE = re.compile(rf"^{_PART}(/{_PART})?$")
_PREFIX_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)::(.*)$")


@dataclass(frozen=True)
class HubId:
    hub: str
    repo_id: str


def _hub_specs():
    from openmind.core.plugins import get_registry

    return get_registry().all("hub")


def hub_names() -> list[str]:
    return sorted(spec.name for spec in _hub_specs())


def find_hub_spec(name_or_prefix: str):
    """The HubSpec named (or prefixed) ``name_or_prefix``; OM-H001 otherwise."""
    key = name_or_prefix.strip().lower()
    for spec in _hub_specs():
        if key in (spec.name.lower(), spec.prefix.lower()):
            return spec
    known = ", ".join(f"{s.name} ({s.prefix}::)" if s.prefix else s.name for s in _hub_specs())
    raise H_UNKNOWN_HUB.error(f"no hub named {name_or_prefix!r} is registered (known: {known or 'none'})")


def looks_like_hub_id(text: str) -> bool:
    """Whether ``text`` is a hub id (prefixed, ``file://``, or ``org/name``) rather than a path."""
    if _PREFIX_RE.match(text) or text.startswith("file://"):
        return True
    return bool(_REPO_RE.match(text)) and ".." not in text


def parse(model_id: str, hub: str | None = None) -> HubId:
    """Split ``model_id`` into (hub, repo id).

    Precedence: an explicit ``hub`` (``--hub``), then an id prefix (``hf::``, ``ms::``, ``om::``,
    ``local::``; ``file:///mirror/org/name`` means the local hub), then ``OPENMIND_HUB``, then
    :data:`DEFAULT_HUB`. A prefix that contradicts ``--hub`` is an error.
    """
    text = str(model_id).strip()
    prefixed = None
    if text.startswith("file://"):
        prefixed, text = "local", text
    else:
        match = _PREFIX_RE.match(text)
        if match:
            prefixed, text = match.group(1), match.group(2)
    if prefixed is not None:
        spec = find_hub_spec(prefixed)
        if hub and find_hub_spec(hub).name != spec.name:
            raise H_BAD_ID.error(
                f"{model_id!r} names hub {spec.name!r} but --hub is {hub!r}",
                hint="Drop the prefix or the --hub option so that they agree.",
            )
        name = spec.name
    else:
        name = find_hub_spec(hub or os.environ.get("OPENMIND_HUB") or DEFAULT_HUB).name
    if name == "local" and (text.startswith("file://") or os.path.isabs(text)):
        return HubId(name, text)  # a folder of the local mirror, resolved by the local hub
    check_repo_id(text, original=str(model_id))
    return HubId(name, text)


def check_repo_id(repo_id: str, original: str | None = None) -> str:
    if not _REPO_RE.match(repo_id) or ".." in repo_id.split("/"):
        raise H_BAD_ID.error(f"{original or repo_id!r} is not a repository id of the form 'org/name'")
    return repo_id


def safe_relpath(name: str, *, what: str = "file") -> str:
    """Check a file name from a hub and return it normalised (``/``-separated, relative).

    Refuses (OM-H008) empty names, absolute paths (``/x``, ``C:\\x``, ``\\\\server``), any ``..``
    component, backslashes, NUL and control characters: such a name could land outside the
    target folder.
    """
    bad = (
        not name
        or "\x00" in name
        or any(ord(ch) < 32 for ch in name)
        or "\\" in name
        or name.startswith("/")
        or re.match(r"^[A-Za-z]:", name) is not None
    )
    parts = PurePosixPath(name).parts if not bad else ()
    if bad or not parts or any(part in ("..", ".", "") for part in name.split("/")):
        raise H_UNSAFE_PATH.error(f"refusing {what} name {name!r}: it could escape the target folder")
    return "/".join(parts)


def contained(root: str | os.PathLike, relpath: str) -> Path:
    """``root / relpath`` after checking that it stays inside ``root`` once symlinks are resolved.

    Catches a pre-existing symlinked sub-folder (``root/a -> /etc``) as well as bad names.
    """
    rel = safe_relpath(relpath)
    root_real = Path(os.path.realpath(root))
    target = Path(root) / rel
    parent_real = Path(os.path.realpath(target.parent))
    if parent_real != root_real and root_real not in parent_real.parents:
        raise H_UNSAFE_PATH.error(f"refusing {relpath!r}: {target.parent} resolves outside {root} (a symlink?)")
    return target
