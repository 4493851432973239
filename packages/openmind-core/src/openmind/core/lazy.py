"""Resolve ``"module:attr"`` strings, turning missing dependencies into coded errors."""

from __future__ import annotations

import importlib
from typing import Any

from openmind.core.errors import R_BAD_SPEC, R_IMPORT, X_MISSING, Component


def import_string(
    target: str,
    *,
    feature: str = "",
    requires: tuple[str, ...] = (),
    component: Component | None = None,
) -> Any:
    """Import ``module:attr`` (attr may be dotted).

    When the import fails because a requirement is missing, raise OM-X001 naming the exact
    install command instead of a bare ``ModuleNotFoundError`` from deep inside.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise R_BAD_SPEC.error(f"{feature or 'spec'}: {target!r} is not 'module:attr'", component=component)
    from openmind.core.requirements import missing

    absent = missing(requires)
    if absent:
        commands = " && ".join(status.install_command for status in absent)
        names = ", ".join(status.requirement for status in absent)
        raise X_MISSING.error(
            f"{feature or target} needs {names}, which is not installed",
            hint=f"Install it: {commands}",
            component=component,
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing_top = (exc.name or "").split(".")[0]
        if missing_top and missing_top != "openmind" and not module_name.startswith(exc.name or "\0"):
            raise X_MISSING.error(
                f"{feature or target} needs the Python module {exc.name!r}, which is not installed",
                hint=f'Install it: pip install "{missing_top}"',
                component=component,
            ) from exc
        if module_name.startswith("openmind."):
            dist = "openmind-" + module_name.split(".")[1]
            raise X_MISSING.error(
                f"{feature or target} is provided by {dist}, which is not installed",
                hint=f'Install it: pip install "{dist}"',
                component=component,
            ) from exc
        raise R_IMPORT.error(f"{feature or target}: cannot import {module_name!r}: {exc}", component=component) from exc
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError as exc:
        raise R_IMPORT.error(
            f"{feature or target}: {module_name!r} has no attribute {attr!r}", component=component
        ) from exc
    return obj
