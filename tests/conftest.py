import pytest


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    plugins.reset()
    yield
    plugins.reset()
