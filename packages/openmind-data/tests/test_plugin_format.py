"""A dataset format registered by a plugin (DatasetFormatSpec + converter) is used by loading,
validation (problems name the file, line and field) and ``formatting: auto``; the built-in formats
are registered the same way."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from data_helpers import data_args, write_jsonl

from openmind.core.errors import OpenMindError
from openmind.core.hookspecs import hookimpl
from openmind.core.specs import DatasetFormatSpec


@pytest.fixture
def poems_plugin(monkeypatch):
    from openmind.core import plugins

    spec = DatasetFormatSpec(
        name="poems", produces="openai", columns=("topic", "poem"), impl="data_helpers:poems_to_messages"
    )
    plugin = SimpleNamespace(openmind_register_dataset_formats=hookimpl(lambda register: register(spec)))
    host = plugins.PluginHost(extra={"poems-plugin": plugin})
    monkeypatch.setattr(plugins, "get_registry", lambda: host.registry)
    return host


def test_builtin_formats_are_registered():
    from openmind.core.plugins import get_registry
    from openmind.data.converters import INPUT_FORMATS

    assert {s.name for s in get_registry().all("dataset-format")} >= set(INPUT_FORMATS)


def test_plugin_format_converts_checks_and_is_detected(poems_plugin, tmp_path):
    from openmind.data.loading import load

    rows = [{"topic": "rain", "poem": "Drops on the roof."}, {"topic": "sun", "poem": ""}]
    path = write_jsonl(tmp_path / "poems.jsonl", rows)
    for formatting in ("poems", "auto"):
        loaded = load(data_args(dataset=[str(path)], formatting=formatting, on_error="skip"), stage="sft")
        assert (loaded.report.read, loaded.report.kept, loaded.report.rejected) == (2, 1, 1)
        problem = loaded.report.problems[0]
        assert (problem.line, problem.field) == (2, "poem") and "poems converter" in problem.reason
        assert "Write a poem about rain." in str(loaded.dataset[0]["messages"])
    with pytest.raises(OpenMindError) as info:
        load(data_args(dataset=[str(path)], formatting="poems"), stage="sft")  # on_error fail: first bad row
    assert info.value.code.startswith("OM-D") and "poem" in str(info.value.location)


def test_unknown_formatting_lists_the_registered_ones(poems_plugin, tmp_path):
    from openmind.data.converters import Converter, Mapping

    with pytest.raises(OpenMindError) as info:
        Converter(Mapping("verse", {}, {}, False), "sft")
    assert info.value.code == "OM-D006" and "poems" in info.value.message and "alpaca" in info.value.message
