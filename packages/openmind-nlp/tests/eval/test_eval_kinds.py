"""Evaluation task kinds come from the registry: a plugin's kind is accepted in task files and
``evaluate`` dispatches to its runner; the built-in kinds are registered the same way."""

import json
import textwrap
from types import SimpleNamespace

import pytest

from openmind.core.errors import OpenMindError
from openmind.core.hookspecs import hookimpl
from openmind.core.plugins import PluginHost
from openmind.core.specs import EvalKindSpec


@pytest.fixture()
def with_ranking(tmp_path, monkeypatch):
    from openmind.core import plugins

    (tmp_path / "ranking_kind.py").write_text(
        textwrap.dedent(
            """
            def run(model, task, n_shot, limit, batch_size, progress):
                items = [item for subject in task.subjects for item in subject.items]
                return {"items": len(items), "model": model.name}, [{"where": i.where} for i in items]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = EvalKindSpec(name="ranking", impl="ranking_kind:run", capability="loglikelihood")
    extra = SimpleNamespace(openmind_register_eval_kinds=hookimpl(lambda register: register(spec)))
    host = PluginHost(extra={"ranking-plugin": extra})
    monkeypatch.setattr(plugins, "_REGISTRY", host.registry)
    return host.registry


def task_file(tmp_path, kind):
    rows = [{"input": "1+1", "target": "2"}, {"input": "2+2", "target": "4"}]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    path = tmp_path / "task.yaml"
    path.write_text(f"name: sums\ntype: {kind}\ndata: rows.jsonl\n")
    return path


def test_builtin_kinds_are_registered(with_ranking):
    from openmind.nlp.eval.runner import kind_runner, run_generation, run_multiple_choice
    from openmind.nlp.eval.tasks import eval_kinds

    assert set(eval_kinds()) == {"multiple_choice", "generation", "ranking"}
    assert kind_runner("multiple_choice") is run_multiple_choice and kind_runner("generation") is run_generation


def test_a_plugin_kind_is_loaded_and_dispatched(with_ranking, tmp_path):
    from openmind.nlp.eval.runner import evaluate
    from openmind.nlp.eval.tasks import load_task_yaml

    task = load_task_yaml(task_file(tmp_path, "ranking"))
    assert task.type == "ranking" and task.size == 2
    out = evaluate(SimpleNamespace(name="m"), [task], progress=False)
    assert out["tasks"]["sums"] == {"items": 2, "model": "m"} and len(out["samples"]["sums"]) == 2


def test_an_unregistered_kind_names_the_registered_ones(with_ranking, tmp_path):
    from openmind.nlp.eval.tasks import load_task_yaml

    with pytest.raises(OpenMindError) as info:
        load_task_yaml(task_file(tmp_path, "bleu"))
    assert info.value.code == "OM-E003" and info.value.location.endswith("type")
    assert "ranking" in info.value.message and "multiple_choice" in info.value.message
