"""TaskSpec.default_models: chosen per framework, listed, and kept through the registry snapshot."""

from __future__ import annotations

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.specs import DefaultModel, TaskSpec

TASK = TaskSpec(
    name="t",
    default_models=(
        DefaultModel("om::org/pt-model", "abc1234"),
        DefaultModel("om::org/ms-model", "def5678", framework="ms", backend="mindone"),
    ),
)


def test_default_model_per_framework():
    assert TASK.default_model().label() == "om::org/pt-model@abc1234"
    assert TASK.default_model("auto").model_id == "om::org/pt-model"
    assert TASK.default_model("ms").label() == "om::org/ms-model@def5678"
    assert TaskSpec(name="u").default_model() is None


def test_round_trip_through_dicts_as_the_snapshot_does():
    data = TASK.to_dict()
    assert data["default_models"][1] == {
        "model_id": "om::org/ms-model",
        "revision": "def5678",
        "framework": "ms",
        "backend": "mindone",
    }
    data.pop("kind")
    data.pop("component")
    rebuilt = TaskSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
    assert rebuilt == TASK and rebuilt.default_model("ms").backend == "mindone"


def test_api_default_model_or_a_coded_error(monkeypatch):
    from openmind.core.api import default_model

    monkeypatch.delenv("OPENMIND_FRAMEWORK", raising=False)
    assert default_model(TASK) == ("om::org/pt-model", "abc1234")
    assert default_model(TASK, "ms") == ("om::org/ms-model", "def5678")
    with pytest.raises(OpenMindError) as info:
        default_model(TaskSpec(name="u"))
    assert info.value.code == "OM-A004" and info.value.location == "model"
