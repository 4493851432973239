import pytest


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    """Each test sees a freshly built registry and writes logs to its own folder."""
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture(autouse=True)
def _text_stages_when_core_is_alone(monkeypatch):
    """The core's own tests check `stage` like `openmind train` does once openmind-nlp registers the
    text stages; with the core alone (its own test session) those four are stood in for."""
    from openmind.core.training import wrapper

    real = wrapper.training_stages
    monkeypatch.setattr(wrapper, "training_stages", lambda registry=None: real(registry) or ("pt", "sft", "dpo", "rm"))
