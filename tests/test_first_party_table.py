"""The core's table of first-party distributions (openmind/core/distributions.py) says what each
one adds; it words the "install X" hints, so it must match what their plugins really register."""

from __future__ import annotations

import pytest

from openmind.core.distributions import FIRST_PARTY
from openmind.core.plugins import get_registry
from openmind.core.requirements import installed_version


@pytest.mark.parametrize("dist", sorted(FIRST_PARTY))
def test_table_matches_the_registry(dist, monkeypatch):
    if installed_version(dist) is None:
        pytest.fail(f"{dist} is not installed in the integration environment (noxfile installs all six)")
    monkeypatch.setenv("OPENMIND_DISABLE_PLUGINS", "testplugin")
    registry = get_registry()

    def by(kind: str, attr: str) -> set[str]:
        return {getattr(s, attr) for s in registry.all(kind) if s.component and s.component.distribution == dist}

    info = FIRST_PARTY[dist]
    assert by("command", "name") == set(info["commands"])
    assert by("pipeline", "task") == set(info.get("pipelines", ()))
    assert by("trainer", "task") == set(info.get("trainers", ()))
