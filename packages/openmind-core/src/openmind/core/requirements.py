"""Requirement strings: is each installed, at what version, and how to install it.

Uses ``importlib.metadata`` only (no imports of the packages themselves), so checking the
whole support matrix stays fast.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def installed_version(name: str) -> str | None:
    """Installed version of distribution ``name`` (cached per process), or ``None``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None
    except Exception:  # a broken dist-info is "not usable"
        return None


def installed_distributions() -> dict[str, str]:
    """Map of normalised distribution name -> version of everything installed (slow: scans all)."""
    from importlib.metadata import distributions

    found: dict[str, str] = {}
    for dist in distributions():
        name = dist.metadata.get("Name") if dist.metadata else None
        if name:
            found.setdefault(normalize(name), dist.version)
    return found


#: requirement -> (installed version, satisfied), known from a valid registry snapshot
_PRELOADED: dict[str, tuple[str | None, bool]] = {}


def preload(statuses: dict[str, tuple[str | None, bool]]) -> None:
    """Statuses already known (the registry snapshot saves them under a key that changes when
    anything is installed or removed), so :func:`check` needs no scan of the installed set."""
    _PRELOADED.update(statuses)


def refresh() -> None:
    installed_version.cache_clear()
    _PRELOADED.clear()


class RequirementStatus(NamedTuple):
    # a NamedTuple, not a dataclass: ``openmind list --json`` builds these without importing
    # dataclasses (and inspect), which would cost a fifth of its start-up
    requirement: str
    name: str
    installed: str | None
    satisfied: bool

    @property
    def install_command(self) -> str:
        return f'pip install "{self.requirement}"'

    def to_dict(self) -> dict:
        return {
            "requirement": self.requirement,
            "installed": self.installed,
            "satisfied": self.satisfied,
            "install": None if self.satisfied else self.install_command,
        }


def requirement_name(requirement: str) -> str:
    match = _NAME_RE.match(requirement)
    if not match:
        raise ValueError(f"not a requirement string: {requirement!r}")
    return match.group(1)


def check(requirement: str) -> RequirementStatus:
    """Check one requirement string against the installed distributions."""
    name = requirement_name(requirement)
    known = _PRELOADED.get(requirement)
    if known is not None:
        return RequirementStatus(requirement, name, known[0], known[1])
    version = installed_version(name)
    satisfied = version is not None
    spec = requirement[len(name) :].strip()
    if satisfied and spec and not spec.startswith(";"):
        try:
            from packaging.requirements import Requirement

            satisfied = Requirement(requirement).specifier.contains(version, prereleases=True)
        except Exception:  # an unparsable spec is reported by registry validation, not here
            satisfied = True
    return RequirementStatus(requirement, name, version, satisfied)


def missing(requirements: tuple[str, ...] | list[str]) -> list[RequirementStatus]:
    return [status for status in map(check, requirements) if not status.satisfied]


def valid(requirement: str) -> bool:
    try:
        from packaging.requirements import Requirement

        Requirement(requirement)
    except Exception:
        return False
    return True
