import pytest


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    """Each test sees a freshly built registry, writes logs and caches to its own folder."""
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENMIND_QUIET", "1")
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture(scope="session")
def llama2_tok():
    from openmind.nlp.testing.assets import llama2_tokenizer

    return llama2_tokenizer()


@pytest.fixture(scope="session")
def llama2_template():
    from openmind.nlp.templates import load_template

    return load_template("llama2")
