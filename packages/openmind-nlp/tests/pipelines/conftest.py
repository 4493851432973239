import pytest


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch, tmp_path):
    from openmind.core import plugins

    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path / "logs"))
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture(autouse=True)
def _console_handlers():
    """CLI verbs attach a console handler to the "openmind" logger; drop it after each test so that
    it does not outlive the test's captured stderr."""
    import logging

    logger = logging.getLogger("openmind")
    before = list(logger.handlers)
    yield
    for handler in logger.handlers[len(before) :]:
        logger.removeHandler(handler)
