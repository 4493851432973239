import pytest

from openmind.core import errors as E
from openmind.core.frameworks import resolve_framework


def test_error_carries_code_hint_location():
    err = E.A_BAD_VALUE.error("lr: 'x' is invalid", location="cfg.yaml:3")
    assert isinstance(err, E.ArgumentError) and isinstance(err, ValueError)
    assert err.code == "OM-A002" and err.hint == E.A_BAD_VALUE.hint
    assert "cfg.yaml:3" in str(err) and "hint:" in str(err)
    assert err.to_dict()["code"] == "OM-A002"


def test_codes_are_validated_and_unique():
    with pytest.raises(ValueError):
        E.define("BAD-1", "x")
    with pytest.raises(ValueError):
        E.define("OM-R001", "another meaning")


def test_framework_resolution_is_deterministic(monkeypatch):
    from openmind.core import frameworks as F

    monkeypatch.delenv("OPENMIND_FRAMEWORK", raising=False)
    monkeypatch.setattr(F, "available_frameworks", lambda: ["pt", "ms"])
    assert resolve_framework("auto")[0] == "pt"
    assert resolve_framework("auto", ["ms"])[0] == "ms"
    assert resolve_framework("mindspore")[0] == "ms"
    monkeypatch.setenv("OPENMIND_FRAMEWORK", "ms")
    assert resolve_framework("auto")[0] == "ms"
    assert resolve_framework("pt")[0] == "pt"
    with pytest.raises(E.ArgumentError):
        resolve_framework("jax")
    monkeypatch.setattr(F, "available_frameworks", lambda: [])
    monkeypatch.delenv("OPENMIND_FRAMEWORK")
    with pytest.raises(E.DependencyError) as info:
        resolve_framework("auto", ["pt"])
    assert info.value.code == "OM-X002"
