"""Framework availability without importing a framework, and the ``framework="auto"`` rule.

Frameworks are registered specs (:class:`~openmind.core.specs.FrameworkSpec`, hook
``openmind_register_frameworks``); the names, aliases, availability checks and auto order below are
computed from them, so a plugin adds a framework without editing this module.
"""

from __future__ import annotations

import os
from importlib.util import find_spec

from openmind.core.errors import A_BAD_VALUE, X_FRAMEWORK


def _registry():
    from openmind.core.plugins import get_registry

    return get_registry()


def framework_names() -> tuple[str, ...]:
    """Registered frameworks in ``auto`` order (highest priority first)."""
    return _registry().framework_names()


def framework_choices() -> tuple[str, ...]:
    """Values the ``framework`` argument takes: ``auto`` and every registered framework."""
    return ("auto", *framework_names())


def __getattr__(name: str):
    # computed module attributes kept for callers of the former constant
    if name == "AUTO_ORDER":
        return framework_names()
    raise AttributeError(name)


def is_torch_available() -> bool:
    return find_spec("torch") is not None


def is_mindspore_available() -> bool:
    return find_spec("mindspore") is not None


def is_transformers_available() -> bool:
    return find_spec("transformers") is not None


def is_available(framework: str) -> bool:
    """Whether every module a registered framework names is importable (nothing is imported)."""
    for spec in _registry().frameworks():
        if spec.name == framework:
            return all(find_spec(module) is not None for module in spec.modules)
    return False


def available_frameworks() -> list[str]:
    """Installed registered frameworks, in ``auto`` order."""
    return [name for name in framework_names() if is_available(name)]


def resolve_framework(requested: str | None = "auto", candidates: list[str] | None = None) -> tuple[str, str]:
    """Return ``(framework, reason)``.

    ``requested`` may be ``auto``/``None`` (then ``OPENMIND_FRAMEWORK`` is consulted), ``pt`` or
    ``ms``. ``candidates`` are the frameworks that implement what is asked for (e.g. pipelines
    registered for the task). The choice is deterministic: the first of :data:`AUTO_ORDER` that
    is both installed and a candidate.
    """
    requested = (requested or "auto").lower()
    if requested == "auto":
        env = os.environ.get("OPENMIND_FRAMEWORK", "").strip().lower()
        if env and env != "auto":
            requested = env
            source = "OPENMIND_FRAMEWORK"
        else:
            source = ""
    else:
        source = "argument"
    registry = _registry()
    aliases = registry.framework_aliases()
    requested = aliases.get(requested, requested)
    order = registry.framework_names()
    if requested != "auto":
        if requested not in order:
            raise A_BAD_VALUE.error(
                f"framework {requested!r} is not one of auto, {', '.join(order)}", location=source or None
            )
        return requested, f"framework {requested} ({source})"
    installed = available_frameworks()
    pool = [fw for fw in order if fw in installed and (candidates is None or fw in candidates)]
    if not pool:
        raise X_FRAMEWORK.error(
            "no installed framework implements this"
            + (
                f" (implemented for: {', '.join(candidates)}; installed: {', '.join(installed) or 'none'})"
                if candidates is not None
                else ""
            )
        )
    return pool[0], f"framework {pool[0]} (auto: first installed of {', '.join(order)})"
