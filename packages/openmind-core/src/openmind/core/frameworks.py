"""Framework availability without importing a framework, and the ``framework="auto"`` rule."""

from __future__ import annotations

import os
from importlib.util import find_spec

from openmind.core.errors import A_BAD_VALUE, X_FRAMEWORK
from openmind.core.specs import FRAMEWORKS

#: auto prefers PyTorch: it is the backend with the widest model coverage.
AUTO_ORDER = ("pt", "ms")


def is_torch_available() -> bool:
    return find_spec("torch") is not None


def is_mindspore_available() -> bool:
    return find_spec("mindspore") is not None


def is_transformers_available() -> bool:
    return find_spec("transformers") is not None


def available_frameworks() -> list[str]:
    found = []
    if is_torch_available():
        found.append("pt")
    if is_mindspore_available():
        found.append("ms")
    return found


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
    aliases = {"pytorch": "pt", "torch": "pt", "mindspore": "ms"}
    requested = aliases.get(requested, requested)
    if requested != "auto":
        if requested not in FRAMEWORKS:
            raise A_BAD_VALUE.error(f"framework {requested!r} is not one of auto, pt, ms", location=source or None)
        return requested, f"framework {requested} ({source})"
    installed = available_frameworks()
    pool = [fw for fw in AUTO_ORDER if fw in installed and (candidates is None or fw in candidates)]
    if not pool:
        raise X_FRAMEWORK.error(
            "no installed framework implements this"
            + (
                f" (implemented for: {', '.join(candidates)}; installed: {', '.join(installed) or 'none'})"
                if candidates is not None
                else ""
            )
        )
    return pool[0], f"framework {pool[0]} (auto: first installed of {', '.join(AUTO_ORDER)})"
