"""The registry: every spec the plugins registered, with their relations validated.

Problems (duplicates, dangling references, specs for unknown tasks, broken relations) are
collected, each attributed to the plugin at fault, instead of aborting on the first one: one
broken third-party plugin must not make the whole toolkit unusable. ``openmind list --check``
and :meth:`Registry.raise_problems` turn them into a non-zero exit / an exception.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable
from typing import TypeVar

from openmind.core import errors as E
from openmind.core.errors import Component, OpenMindError
from openmind.core.requirements import valid as valid_requirement
from openmind.core.specs import (
    FRAMEWORKS,
    SPEC_KINDS,
    ArgumentGroupSpec,
    CommandSpec,
    DatasetSpec,
    EvalKindSpec,
    FrameworkSpec,
    HubSpec,
    ModelGroupSpec,
    PipelineSpec,
    PipelineWrapperSpec,
    RouteSpec,
    Spec,
    TaskSpec,
    TemplateSpec,
    TrainerSpec,
    TrainerWrapperSpec,
    check_impl,
)

S = TypeVar("S", bound=Spec)


def suggest(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    return f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, dict[object, Spec]] = {kind: {} for kind in SPEC_KINDS}
        self.problems: list[OpenMindError] = []
        #: plugin name -> component, in load order.
        self.plugins: dict[str, Component] = {}
        #: every plugin the host tried to load (``PluginInfo``), including failed ones.
        self.plugin_infos: list = []

    # ---- registration ----------------------------------------------------------------
    def add(self, spec: Spec, component: Component | None = None) -> None:
        """Add one spec on behalf of ``component`` (the registering plugin)."""
        if not isinstance(spec, Spec):
            self.problems.append(E.R_BAD_SPEC.error(f"registered object {spec!r} is not a Spec", component=component))
            return
        if component is not None:
            object.__setattr__(spec, "component", component)
        where = spec.component
        if spec.impl and not check_impl(spec.impl):
            self.problems.append(
                E.R_BAD_SPEC.error(
                    f"{spec.kind} {spec.label()!r}: impl {spec.impl!r} is not 'module:attr'", component=where
                )
            )
        for requirement in spec.requires:
            if not valid_requirement(requirement):
                self.problems.append(
                    E.R_BAD_SPEC.error(
                        f"{spec.kind} {spec.label()!r}: {requirement!r} is not a requirement string", component=where
                    )
                )
        framework = getattr(spec, "framework", None)
        if framework is not None and framework not in self.framework_names():
            self.problems.append(
                E.R_BAD_SPEC.error(
                    f"{spec.kind} {spec.label()!r}: framework {framework!r} is not one of "
                    f"{', '.join(self.framework_names())} (register it with openmind_register_frameworks)",
                    component=where,
                )
            )
            return
        table = self._specs[spec.kind]
        existing = table.get(spec.key)
        if existing is not None:
            self.problems.append(
                E.R_DUPLICATE.error(
                    f"{spec.kind} {spec.label()!r} is registered by {existing.component} and again by {where}; "
                    "the first registration is kept",
                    component=where,
                )
            )
            return
        table[spec.key] = spec

    # ---- access ----------------------------------------------------------------------
    def all(self, kind: str | type[S]) -> list[S]:
        if isinstance(kind, type):
            kind = kind.kind
        return list(self._specs[kind].values())  # type: ignore[arg-type]

    def tasks(self) -> list[TaskSpec]:
        return self.all(TaskSpec)

    def task(self, name: str) -> TaskSpec:
        """A task by name or alias; OM-I001 (with suggestions) if unknown."""
        table = self._specs[TaskSpec.kind]
        if name in table:
            return table[name]  # type: ignore[return-value]
        for task in table.values():
            if name in task.aliases:  # type: ignore[attr-defined]
                return task  # type: ignore[return-value]
        names = [t.name for t in self.tasks()] + [a for t in self.tasks() for a in t.aliases]
        raise E.I_UNKNOWN_TASK.error(f"unknown task {name!r}.{suggest(name, names)}")

    def get(self, kind: str | type[S], key: object) -> S:
        if isinstance(kind, type):
            kind = kind.kind
        table = self._specs[kind]
        if key in table:
            return table[key]  # type: ignore[return-value]
        raise E.R_NOT_FOUND.error(f"no {kind} named {key!r} is registered.{suggest(str(key), [str(k) for k in table])}")

    def find(self, kind: str | type[S], key: object) -> S | None:
        if isinstance(kind, type):
            kind = kind.kind
        return self._specs[kind].get(key)  # type: ignore[return-value]

    def pipeline_wrapper(self, task: str) -> PipelineWrapperSpec:
        return self.get(PipelineWrapperSpec, self.task(task).name)

    def pipelines_for(self, task: str, framework: str | None = None) -> list[PipelineSpec]:
        name = self.task(task).name
        found = [
            p for p in self.all(PipelineSpec) if p.task == name and (framework is None or p.framework == framework)
        ]
        return sorted(found, key=lambda p: -p.priority)

    def trainers_for(self, task: str, framework: str | None = None) -> list[TrainerSpec]:
        name = self.task(task).name
        found = [t for t in self.all(TrainerSpec) if t.task == name and (framework is None or t.framework == framework)]
        return sorted(found, key=lambda t: -t.priority)

    def model_group(self, name: str) -> ModelGroupSpec:
        return self.get(ModelGroupSpec, name)

    def template(self, name: str) -> TemplateSpec:
        return self.get(TemplateSpec, name)

    def hub(self, name: str) -> HubSpec:
        return self.get(HubSpec, name)

    def dataset_for(self, task: str) -> DatasetSpec:
        for spec in self.all(DatasetSpec):
            if spec.task == task:
                return spec
        raise E.R_NOT_FOUND.error(f"no dataset format is registered for task {task!r}")

    def command(self, name: str) -> CommandSpec | None:
        for spec in self.all(CommandSpec):
            if spec.name == name or name in spec.aliases:
                return spec
        return None

    # ---- frameworks and other registry-derived lists --------------------------------
    def frameworks(self) -> list[FrameworkSpec]:
        """Registered frameworks, ``framework="auto"`` order first (highest priority)."""
        return sorted(self.all(FrameworkSpec), key=lambda f: -f.priority)

    def framework_names(self) -> tuple[str, ...]:
        """Names of the registered frameworks in auto order (core's built-in pair when none is
        registered, e.g. in a bare :class:`Registry` built by hand)."""
        names = tuple(f.name for f in self.frameworks())
        return names or FRAMEWORKS

    def framework_aliases(self) -> dict[str, str]:
        """Every name a user may write for a framework -> its registered name."""
        out = {}
        for spec in self.frameworks():
            out[spec.name] = spec.name
            for alias in spec.aliases:
                out.setdefault(alias.lower(), spec.name)
        return out

    def tasks_with(self, capability: str) -> tuple[str, ...]:
        """Names of the tasks whose spec declares ``capability`` (``"generative"``, ``"chat"``...)."""
        return tuple(t.name for t in self.tasks() if capability in t.capabilities)

    def group_frameworks(self, group: ModelGroupSpec) -> tuple[str, ...]:
        """The frameworks ``group`` really runs on: those it claims that have a pipeline or a
        trainer for one of its tasks which accepts the group's ``model_types`` (a pipeline that
        declares no ``model_types`` accepts any)."""
        out = []
        for framework in group.frameworks:
            for spec in [*self.all(PipelineSpec), *self.all(TrainerSpec)]:
                if spec.framework != framework or (group.tasks and spec.task not in group.tasks):
                    continue
                types_ = getattr(spec, "model_types", ())
                if not types_ or not group.model_types or set(types_) & set(group.model_types):
                    out.append(framework)
                    break
        return tuple(out)

    def argument_groups_for(self, verb: str) -> list[ArgumentGroupSpec]:
        """Registered argument groups that ``verb`` (a command name) takes."""
        return [g for g in self.all(ArgumentGroupSpec) if verb in g.verbs]

    def routes(self) -> list[RouteSpec]:
        """Serving routes in mount order."""
        return sorted(self.all(RouteSpec), key=lambda r: (r.order, r.path))

    def eval_kinds(self) -> list[EvalKindSpec]:
        return self.all(EvalKindSpec)

    # ---- validation ------------------------------------------------------------------
    def validate(self) -> list[OpenMindError]:
        """Check relations; appends to and returns :attr:`problems`."""
        tasks = self._specs[TaskSpec.kind]
        templates = self._specs[TemplateSpec.kind]
        add = self.problems.append

        aliases: dict[str, TaskSpec] = {}
        for task in self.all(TaskSpec):
            if task.kind_of not in ("inference", "training"):
                add(
                    E.R_BAD_SPEC.error(
                        f"task {task.name!r}: kind_of {task.kind_of!r} is not inference|training",
                        component=task.component,
                    )
                )
            for alias in task.aliases:
                other = aliases.get(alias) or (tasks.get(alias) if alias != task.name else None)
                if other is not None:
                    add(
                        E.R_DUPLICATE.error(
                            f"task alias {alias!r} of {task.name!r} is also claimed by task {other.name!r} ({other.component})",
                            component=task.component,
                        )
                    )  # type: ignore[attr-defined]
                aliases[alias] = task

        def need_task(spec: Spec, task: str, kind_of: str | None = None) -> bool:
            if task not in tasks:
                add(
                    E.R_UNKNOWN_TASK.error(
                        f"{spec.kind} {spec.label()!r} is for unknown task {task!r}.{suggest(task, tasks)}",
                        component=spec.component,
                    )
                )
                return False
            if kind_of and tasks[task].kind_of != kind_of:  # type: ignore[attr-defined]
                add(
                    E.R_RELATION.error(
                        f"{spec.kind} {spec.label()!r} needs a {kind_of} task, but {task!r} is a {tasks[task].kind_of} task",
                        component=spec.component,
                    )
                )  # type: ignore[attr-defined]
                return False
            return True

        wrappers = self._specs[PipelineWrapperSpec.kind]
        for spec in self.all(PipelineWrapperSpec):
            need_task(spec, spec.task, "inference")
        for spec in self.all(PipelineSpec):
            if need_task(spec, spec.task, "inference") and spec.task not in wrappers:
                add(
                    E.R_DANGLING.error(
                        f"pipeline {spec.label()!r} has no pipeline wrapper for task {spec.task!r}",
                        component=spec.component,
                    )
                )
        twrappers = self._specs[TrainerWrapperSpec.kind]
        for spec in self.all(TrainerWrapperSpec):
            need_task(spec, spec.task, "training")
        for spec in self.all(TrainerSpec):
            if need_task(spec, spec.task, "training") and spec.task not in twrappers:
                add(
                    E.R_DANGLING.error(
                        f"trainer {spec.label()!r} has no trainer wrapper for task {spec.task!r}",
                        component=spec.component,
                    )
                )
        dataset_by_task: dict[str, DatasetSpec] = {}
        for spec in self.all(DatasetSpec):
            if need_task(spec, spec.task, "training"):
                other = dataset_by_task.get(spec.task)
                if other is not None:
                    add(
                        E.R_RELATION.error(
                            f"task {spec.task!r} has two dataset formats: {other.name!r} ({other.component}) and {spec.name!r}",
                            component=spec.component,
                        )
                    )
                dataset_by_task[spec.task] = spec

        template_owner: dict[str, ModelGroupSpec] = {}
        for group in self.all(ModelGroupSpec):
            for task in group.tasks:
                need_task(group, task)
            for framework in group.frameworks:
                if framework not in self.framework_names():
                    add(
                        E.R_BAD_SPEC.error(
                            f"model group {group.name!r}: framework {framework!r} is not one of {', '.join(self.framework_names())}",
                            component=group.component,
                        )
                    )
            if not group.template:
                continue
            if group.template not in templates:
                add(
                    E.R_DANGLING.error(
                        f"model group {group.name!r} names template {group.template!r}, which no plugin registers.{suggest(group.template, templates)}",
                        component=group.component,
                    )
                )
                continue
            owner = template_owner.get(group.template)
            if owner is not None:
                add(
                    E.R_RELATION.error(
                        f"template {group.template!r} is claimed by model groups {owner.name!r} and {group.name!r}; each group has its own template",
                        component=group.component,
                    )
                )
            template_owner[group.template] = group
        commands = {name for c in self.all(CommandSpec) for name in (c.name, *c.aliases)}
        for spec in self.all(ArgumentGroupSpec):
            for verb in spec.verbs:
                if verb not in commands:
                    add(
                        E.R_DANGLING.error(
                            f"argument group {spec.name!r} is for unknown command {verb!r}.{suggest(verb, commands)}",
                            component=spec.component,
                        )
                    )
        for spec in self.all(RouteSpec):
            if not spec.path.startswith("/") or not spec.methods:
                add(
                    E.R_BAD_SPEC.error(
                        f"route {spec.label()!r}: the path must start with '/' and name at least one method",
                        component=spec.component,
                    )
                )
            for task in spec.tasks:
                need_task(spec, task, "inference")
        return self.problems

    def raise_problems(self) -> None:
        if self.problems:
            raise self.problems[0]

    # ---- views -----------------------------------------------------------------------
    def by_component(self) -> dict[str, list[Spec]]:
        grouped: dict[str, list[Spec]] = defaultdict(list)
        for table in self._specs.values():
            for spec in table.values():
                grouped[spec.component.distribution if spec.component else "?"].append(spec)
        return dict(grouped)
