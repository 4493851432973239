import pytest


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    """Each test sees a freshly built registry and writes logs to its own folder."""
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    plugins.reset()
    yield
    plugins.reset()
