"""Every registry error case: its code and the plugin at fault."""

from types import SimpleNamespace

import pytest

from openmind.core.hookspecs import hookimpl
from openmind.core.plugins import PluginHost
from openmind.core.specs import (
    DatasetSpec,
    ModelGroupSpec,
    PipelineSpec,
    PipelineWrapperSpec,
    TaskSpec,
    TemplateSpec,
    TrainerSpec,
)


def plugin(**hooks):
    """A plugin object whose attributes are hook implementations."""
    return SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()})


def host(**plugins):
    return PluginHost(load_entry_points=False, extra=plugins)


def tasks(*specs):
    return lambda register: [register(s) for s in specs]


def problems(h):
    return [(p.code, p.component.plugin if p.component else None) for p in h.registry.problems]


def test_clean_plugin_has_no_problems():
    h = host(
        good=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1"), TaskSpec(name="s1", kind_of="training")),
            openmind_register_pipeline_wrappers=tasks(PipelineWrapperSpec(task="t1", impl="m:W")),
            openmind_register_pipelines=tasks(
                PipelineSpec(task="t1", framework="pt", impl="m:P", requires=("torch>=2",))
            ),
            openmind_register_templates=tasks(TemplateSpec(name="tpl", impl="m:T")),
            openmind_register_model_groups=tasks(ModelGroupSpec(name="g", tasks=("t1",), template="tpl")),
            openmind_register_datasets=tasks(DatasetSpec(name="d", task="s1")),
        )
    )
    assert problems(h) == []
    r = h.registry
    assert r.task("t1").component.plugin == "good"
    assert [p.framework for p in r.pipelines_for("t1")] == ["pt"]
    assert r.dataset_for("s1").name == "d"
    assert r.model_group("g").template == "tpl"


def test_duplicate_name_names_second_plugin():
    h = host(
        a=plugin(openmind_register_tasks=tasks(TaskSpec(name="t1"))),
        b=plugin(openmind_register_tasks=tasks(TaskSpec(name="t1"))),
    )
    assert problems(h) == [("OM-R001", "b")]
    assert "a" in h.registry.problems[0].message and h.registry.task("t1").component.plugin == "a"


def test_duplicate_alias_is_reported():
    h = host(
        a=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1", aliases=("x",)), TaskSpec(name="t2", aliases=("x",)))
        )
    )
    assert ("OM-R001", "a") in problems(h)


def test_dangling_template_reference():
    h = host(
        g=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1")),
            openmind_register_model_groups=tasks(ModelGroupSpec(name="g", tasks=("t1",), template="nope")),
        )
    )
    assert problems(h) == [("OM-R002", "g")]


def test_pipeline_without_wrapper_is_dangling():
    h = host(
        p=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1")),
            openmind_register_pipelines=tasks(PipelineSpec(task="t1", framework="ms", impl="m:P")),
        )
    )
    assert problems(h) == [("OM-R002", "p")]


@pytest.mark.parametrize(
    "hook,spec",
    [
        ("openmind_register_pipelines", PipelineSpec(task="ghost", framework="pt", impl="m:P")),
        ("openmind_register_pipeline_wrappers", PipelineWrapperSpec(task="ghost", impl="m:W")),
        ("openmind_register_trainers", TrainerSpec(task="ghost", framework="pt", impl="m:T")),
        ("openmind_register_datasets", DatasetSpec(name="d", task="ghost")),
        ("openmind_register_model_groups", ModelGroupSpec(name="g", tasks=("ghost",))),
    ],
)
def test_spec_for_unknown_task(hook, spec):
    h = host(bad=plugin(**{hook: tasks(spec)}))
    assert problems(h) == [("OM-R003", "bad")]


def test_unknown_task_suggests_close_names():
    h = host(a=plugin(openmind_register_tasks=tasks(TaskSpec(name="text-generation"))))
    h2 = host(
        b=plugin(openmind_register_pipelines=tasks(PipelineSpec(task="text-generaton", framework="pt", impl="m:P"))),
        a=plugin(openmind_register_tasks=tasks(TaskSpec(name="text-generation"))),
    )
    assert "text-generation" in h2.registry.problems[0].message
    with pytest.raises(Exception) as info:
        h.registry.task("text-generaton")
    assert info.value.code == "OM-I001" and "text-generation" in str(info.value)


def test_template_shared_by_two_groups_breaks_one_to_one():
    h = host(
        x=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1")),
            openmind_register_templates=tasks(TemplateSpec(name="tpl", impl="m:T")),
            openmind_register_model_groups=tasks(
                ModelGroupSpec(name="g1", template="tpl"), ModelGroupSpec(name="g2", template="tpl")
            ),
        )
    )
    assert problems(h) == [("OM-R006", "x")]


def test_two_dataset_formats_for_one_task():
    h = host(
        x=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="s", kind_of="training")),
            openmind_register_datasets=tasks(DatasetSpec(name="d1", task="s"), DatasetSpec(name="d2", task="s")),
        )
    )
    assert problems(h) == [("OM-R006", "x")]


def test_pipeline_for_a_training_task_breaks_relation():
    h = host(
        x=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="s", kind_of="training")),
            openmind_register_pipeline_wrappers=tasks(PipelineWrapperSpec(task="s", impl="m:W")),
        )
    )
    assert problems(h) == [("OM-R006", "x")]


@pytest.mark.parametrize(
    "spec",
    [
        TemplateSpec(name="t", impl="no-colon"),
        TemplateSpec(name="t", impl="m:T", requires=("not a requirement !!",)),
        PipelineSpec(task="t", framework="jax", impl="m:P"),
    ],
)
def test_malformed_specs(spec):
    h = host(
        bad=plugin(openmind_register_templates=tasks(spec))
        if isinstance(spec, TemplateSpec)
        else plugin(openmind_register_pipelines=tasks(spec))
    )
    assert ("OM-R005", "bad") in problems(h)


def test_registering_a_non_spec():
    h = host(bad=plugin(openmind_register_tasks=lambda register: register({"name": "x"})))
    assert problems(h) == [("OM-R005", "bad")]


def test_hook_that_raises_is_attributed():
    def boom(register):
        raise RuntimeError("kaput")

    h = host(ok=plugin(openmind_register_tasks=tasks(TaskSpec(name="t1"))), broken=plugin(openmind_register_tasks=boom))
    assert problems(h) == [("OM-P002", "broken")]
    assert "kaput" in h.registry.problems[0].message
    assert h.registry.task("t1")  # the healthy plugin still registered


def test_misspelt_hook_is_reported():
    h = host(typo=plugin(openmind_register_taks=tasks()))
    assert problems(h) == [("OM-P003", "typo")]


def test_plugin_that_fails_to_import_is_reported(monkeypatch):
    from openmind.core import plugins as P

    monkeypatch.setitem(P.DEFAULT_PLUGINS, "ghost", "openmind_no_such_module_xyz")
    h = PluginHost(load_entry_points=False)
    assert problems(h) == [("OM-P001", "ghost")]
    assert not [p for p in h.plugins if p.name == "ghost"][0].loaded


def test_lazy_load_and_missing_requirement_hint():
    h = host(
        x=plugin(
            openmind_register_tasks=tasks(TaskSpec(name="t1")),
            openmind_register_pipeline_wrappers=tasks(
                PipelineWrapperSpec(task="t1", impl="openmind.core.tables:text_table")
            ),
            openmind_register_pipelines=tasks(
                PipelineSpec(
                    task="t1",
                    framework="pt",
                    impl="openmind.core.tables:text_table",
                    requires=("surely-not-installed-pkg>=1",),
                ),
            ),
        )
    )
    wrapper = h.registry.pipeline_wrapper("t1")
    from openmind.core.tables import text_table

    assert wrapper.load() is text_table
    with pytest.raises(Exception) as info:
        h.registry.pipelines_for("t1")[0].load()
    assert info.value.code == "OM-X001"
    assert 'pip install "surely-not-installed-pkg>=1"' in info.value.hint
    assert info.value.component.plugin == "x"


def test_bad_module_in_impl():
    h = host(x=plugin(openmind_register_templates=tasks(TemplateSpec(name="t", impl="openmind.core.tables:nope"))))
    with pytest.raises(Exception) as info:
        h.registry.template("t").load()
    assert info.value.code == "OM-R007"


def test_not_found_suggests():
    h = host()
    with pytest.raises(Exception) as info:
        h.registry.get("command", "lst")
    assert info.value.code == "OM-R004" and "'list'" in str(info.value)


def test_allow_and_block_lists(monkeypatch):
    from openmind.core import plugins as P

    monkeypatch.setenv("OPENMIND_PLUGINS", "nothing-matches")
    only_core = {p.name for p in P.PluginHost().plugins}
    assert only_core == set(P.DEFAULT_PLUGINS)
    monkeypatch.delenv("OPENMIND_PLUGINS")
    everything = {p.name for p in P.PluginHost().plugins}
    monkeypatch.setenv("OPENMIND_DISABLE_PLUGINS", ",".join(everything - set(P.DEFAULT_PLUGINS)))
    assert {p.name for p in P.PluginHost().plugins} == set(P.DEFAULT_PLUGINS)


def test_attributed_wraps_foreign_exceptions():
    from openmind.core.errors import R_NOT_FOUND, Component
    from openmind.core.plugins import attributed

    comp = Component("openmind-x", "1.0", "x")
    with pytest.raises(Exception) as info:
        with attributed(comp):
            raise KeyError("boom")
    assert info.value.code == "OM-P004" and info.value.component == comp
    with pytest.raises(Exception) as info:
        with attributed(comp):
            raise R_NOT_FOUND.error("x")
    assert info.value.code == "OM-R004" and info.value.component == comp
