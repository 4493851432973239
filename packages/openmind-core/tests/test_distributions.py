"""A missing piece names its package (issue 13): the first-party table, `--version`, verbs and
pipelines that another distribution adds. Runs with the core alone (tests(package='core')) and in
the full dev venv: plugins are switched off with OPENMIND_DISABLE_PLUGINS where a test needs them gone."""

from __future__ import annotations

import pytest

from openmind.core import distributions as D
from openmind.core.cli import main
from openmind.core.errors import OpenMindError

#: every first-party plugin except the core's own
OTHERS = (
    "nlp,nlp-templates,nlp-training,nlp-serve,nlp-eval,data,mm,mm-serve,mm-training,pt,pt-training,pt-quickstart,ms,ms-mindformers,"
    "testplugin"
)


@pytest.fixture
def core_only(monkeypatch):
    monkeypatch.setenv("OPENMIND_DISABLE_PLUGINS", OTHERS)
    from openmind.core import plugins

    plugins.reset()
    yield


def test_version_lists_every_installed_openmind_distribution(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"openmind {version('openmind')}"
    for name in D.FIRST_PARTY:
        try:
            expected = version(name)
        except Exception:
            continue
        if name != "openmind":
            assert f"  {name} {expected}" in lines, lines


def test_help_lists_verbs_of_distributions_not_loaded(core_only, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for verb in ("run", "train", "chat", "deploy", "eval", "export", "data", "quickstart"):
        assert f"    {verb}" in out, verb
    assert 'pip install "openmind[nlp]"' in out and 'pip install "openmind[data]"' in out


def test_run_without_nlp_names_the_distribution(core_only, capsys):
    rc = main(["run", "chat", "--model", "./m", "--input", "Hello"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "OM-X001" in err and "openmind-nlp" in err and 'pip install "openmind[nlp]"' in err
    assert "invalid choice" not in err


def test_table_words_the_hints():
    assert D.command_provider("run") == "openmind-nlp"
    assert D.command_provider("data") == "openmind-data"
    assert D.command_provider("nope") is None
    assert D.providers("pipelines", "chat") == ["openmind-pt", "openmind-ms"]
    assert D.providers("pipelines", "fill-mask") == ["openmind-pt", "openmind-ms"]
    assert D.providers("pipelines", "question-answering") == ["openmind-pt"]
    assert D.install_hint("openmind-ms") == 'pip install "openmind[ms]"'


def test_task_without_pipeline_names_the_backends(monkeypatch):
    """A registered task that no installed backend implements: OM-I002 names openmind-pt / -ms."""
    from openmind.core import api

    class Empty:
        def pipelines_for(self, task):
            return []

    monkeypatch.setattr(api, "get_registry", lambda: Empty())
    with pytest.raises(OpenMindError) as info:
        api.select("pipeline", "chat")
    assert info.value.code == "OM-I002"
    assert "openmind-pt or openmind-ms" in info.value.message
    assert 'pip install "openmind[pt]"' in info.value.hint and 'pip install "openmind[ms]"' in info.value.hint
