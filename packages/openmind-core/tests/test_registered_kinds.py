"""Frameworks, argument groups, routes, eval kinds and task capabilities are registered specs:
everything that used to be a closed list is computed from the registry."""

import json
from types import SimpleNamespace

import pytest

from openmind.core import errors as E
from openmind.core.hookspecs import hookimpl
from openmind.core.plugins import PluginHost
from openmind.core.specs import (
    ArgumentGroupSpec,
    EvalKindSpec,
    FrameworkSpec,
    ModelGroupSpec,
    PipelineSpec,
    PipelineWrapperSpec,
    RouteSpec,
    TaskSpec,
)


def plugin(**hooks):
    return SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()})


def each(*specs):
    return lambda register: [register(s) for s in specs]


def host(**plugins):
    return PluginHost(load_entry_points=False, extra=plugins)


def codes(h):
    return [(p.code, p.component.plugin if p.component else None) for p in h.registry.problems]


JAX = FrameworkSpec(name="jx", display_name="JAX", aliases=("jax",), modules=("json",), priority=200)
POEM = TaskSpec(name="poem", capabilities=("generative",))


def test_core_registers_pt_and_ms_through_the_hook():
    h = host()
    assert [f.name for f in h.registry.frameworks()] == ["pt", "ms"]
    assert all(f.component.distribution == "openmind" for f in h.registry.frameworks())
    assert h.registry.framework_aliases()["torch"] == "pt" and h.registry.framework_aliases()["mindspore"] == "ms"


def test_a_plugin_framework_is_accepted_everywhere(monkeypatch):
    from openmind.core import args as A
    from openmind.core import frameworks as F

    h = host(
        jaxplugin=plugin(
            openmind_register_frameworks=each(JAX),
            openmind_register_tasks=each(POEM),
            openmind_register_pipeline_wrappers=each(PipelineWrapperSpec(task="poem", impl="m:W")),
            openmind_register_pipelines=each(PipelineSpec(task="poem", framework="jx", impl="m:P")),
        )
    )
    assert codes(h) == []
    monkeypatch.setattr(F, "_registry", lambda: h.registry)
    monkeypatch.delenv("OPENMIND_FRAMEWORK", raising=False)
    assert F.framework_names() == ("jx", "pt", "ms")  # highest priority first
    assert F.framework_choices()[:2] == ("auto", "jx")
    assert F.is_available("jx")  # its module ("json") is importable; nothing else is checked
    assert F.resolve_framework("jax")[0] == "jx"  # an alias
    assert F.resolve_framework("auto", ["jx", "pt"])[0] == "jx"
    assert F.AUTO_ORDER == ("jx", "pt", "ms")
    # the unified `framework` argument takes it too; an unknown one names the registered choices
    assert A.convert("framework", "jx", str, A.framework_choices) == "jx"
    with pytest.raises(E.ArgumentError) as info:
        A.convert("framework", "tf", str, A.framework_choices)
    assert "jx" in info.value.message


def test_a_pipeline_for_an_unregistered_framework_is_a_bad_spec():
    h = host(
        bad=plugin(
            openmind_register_tasks=each(POEM),
            openmind_register_pipeline_wrappers=each(PipelineWrapperSpec(task="poem", impl="m:W")),
            openmind_register_pipelines=each(PipelineSpec(task="poem", framework="jx", impl="m:P")),
        )
    )
    assert codes(h) == [("OM-R005", "bad")]
    assert "openmind_register_frameworks" in h.registry.problems[0].message


def test_task_capabilities_replace_task_lists():
    h = host(p=plugin(openmind_register_tasks=each(POEM, TaskSpec(name="odes", capabilities=("generative", "chat")))))
    assert h.registry.tasks_with("generative") == ("poem", "odes")
    assert h.registry.tasks_with("chat") == ("odes",)


def test_group_frameworks_only_lists_frameworks_with_a_pipeline_for_the_group():
    groups = (
        ModelGroupSpec(name="llamaish", tasks=("poem",), model_types=("llama",)),
        ModelGroupSpec(name="gpt2ish", tasks=("poem",), model_types=("gpt2",)),
    )
    h = host(
        p=plugin(
            openmind_register_tasks=each(POEM),
            openmind_register_pipeline_wrappers=each(PipelineWrapperSpec(task="poem", impl="m:W")),
            openmind_register_pipelines=each(
                PipelineSpec(task="poem", framework="pt", impl="m:P"),
                PipelineSpec(task="poem", framework="ms", impl="m:Q", model_types=("llama", "qwen2")),
            ),
            openmind_register_model_groups=each(*groups),
        )
    )
    assert codes(h) == []
    llamaish, gpt2ish = (h.registry.model_group(g.name) for g in groups)
    assert llamaish.frameworks == gpt2ish.frameworks == ("pt", "ms")  # what the groups claim
    assert h.registry.group_frameworks(llamaish) == ("pt", "ms")
    assert h.registry.group_frameworks(gpt2ish) == ("pt",)  # ms declares no gpt2 support


def test_argument_group_route_and_eval_kind_specs_are_validated():
    h = host(
        p=plugin(
            openmind_register_argument_groups=each(ArgumentGroupSpec(name="poem", impl="m:A", verbs=("nosuchverb",))),
            openmind_register_routes=each(
                RouteSpec(path="/v1/poems", impl="m:h"),
                RouteSpec(path="v1/bad", impl="m:h"),
                RouteSpec(path="/v1/poems", impl="m:other"),
            ),
            openmind_register_eval_kinds=each(EvalKindSpec(name="ranking", impl="m:run")),
        )
    )
    assert sorted(codes(h)) == [("OM-R001", "p"), ("OM-R002", "p"), ("OM-R005", "p")]
    assert [r.path for r in h.registry.routes()] == ["/v1/poems", "v1/bad"]
    assert [k.name for k in h.registry.eval_kinds()] == ["ranking"]


def test_new_kinds_survive_the_snapshot(tmp_path, monkeypatch):
    from openmind.core import snapshot

    h = host(
        p=plugin(
            openmind_register_frameworks=each(JAX),
            openmind_register_routes=each(RouteSpec(path="/v1/poems", methods=("POST", "PUT"), impl="m:h")),
            openmind_register_argument_groups=each(ArgumentGroupSpec(name="poem", impl="m:A", verbs=("list",))),
            openmind_register_eval_kinds=each(EvalKindSpec(name="ranking", impl="m:run", capability="loglikelihood")),
        )
    )
    data = json.loads(json.dumps({"specs": [s.to_dict() for k in h.registry._specs for s in h.registry.all(k)]}))
    rebuilt = snapshot._rebuild({**data, "problems": [], "plugins": []})
    assert rebuilt.framework_names() == ("jx", "pt", "ms")
    assert rebuilt.routes()[0].methods == ("POST", "PUT")
    assert rebuilt.argument_groups_for("list")[0].impl == "m:A"
    assert rebuilt.eval_kinds()[0].capability == "loglikelihood"
