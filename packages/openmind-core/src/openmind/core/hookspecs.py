"""Hook specifications: the whole plugin API of openmind.

A plugin is a module (or object) with functions decorated by :data:`hookimpl` and named like
the specs below; it is found through the ``openmind`` entry-point group::

    # pyproject.toml of a third-party package
    [project.entry-points.openmind]
    my_plugin = "my_package.openmind_plugin"

    # my_package/openmind_plugin.py
    from openmind.core.hookspecs import hookimpl
    from openmind.core.specs import TaskSpec

    @hookimpl
    def openmind_register_tasks(register):
        register(TaskSpec(name="poem", description="Write a poem"))

Registration hooks receive a ``register`` callback and call it once per spec. They must not
import a framework: specs name implementations as ``"module:attr"`` strings. openmind-core's
own built-ins are registered through these same hooks.

Hooks are always called with keyword arguments; a hook only ever grows by new arguments, and
implementations may accept fewer than the spec offers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from openmind.core.specs import (
        ArgumentGroupSpec,
        CommandSpec,
        ConfigDialectSpec,
        DatasetFormatSpec,
        DatasetSpec,
        EvalKindSpec,
        FrameworkSpec,
        HubSpec,
        ModelGroupSpec,
        PipelineSpec,
        PipelineWrapperSpec,
        RewardSpec,
        RouteSpec,
        TaskSpec,
        TemplateSpec,
        TrainerSpec,
        TrainerWrapperSpec,
    )

PROJECT = "openmind"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def openmind_register_tasks(register: Callable[[TaskSpec], None]) -> None:
    """Register tasks (``chat``, ``text2emb``, training tasks such as ``sft``).

    :param register: call with one :class:`~openmind.core.specs.TaskSpec` per task.
    :returns: nothing.
    """


@hookspec
def openmind_register_pipeline_wrappers(register: Callable[[PipelineWrapperSpec], None]) -> None:
    """Register the user-facing, framework-neutral pipeline wrapper of a task (1:1 with the task).

    :param register: call with one :class:`~openmind.core.specs.PipelineWrapperSpec` per task.
    :returns: nothing.
    """


@hookspec
def openmind_register_pipelines(register: Callable[[PipelineSpec], None]) -> None:
    """Register per-framework pipelines (preprocess / forward / postprocess) for known tasks.

    :param register: call with one :class:`~openmind.core.specs.PipelineSpec` per
        (task, framework, backend).
    :returns: nothing.
    """


@hookspec
def openmind_register_trainer_wrappers(register: Callable[[TrainerWrapperSpec], None]) -> None:
    """Register the user-facing trainer wrapper of a training task (1:1 with the task).

    :param register: call with one :class:`~openmind.core.specs.TrainerWrapperSpec` per task.
    :returns: nothing.
    """


@hookspec
def openmind_register_trainers(register: Callable[[TrainerSpec], None]) -> None:
    """Register per-framework trainers for known training tasks.

    :param register: call with one :class:`~openmind.core.specs.TrainerSpec` per
        (task, framework, backend).
    :returns: nothing.
    """


@hookspec
def openmind_register_model_groups(register: Callable[[ModelGroupSpec], None]) -> None:
    """Register model families with their meta (architectures, hub ids, template, LoRA targets).

    :param register: call with one :class:`~openmind.core.specs.ModelGroupSpec` per group.
    :returns: nothing.
    """


@hookspec
def openmind_register_templates(register: Callable[[TemplateSpec], None]) -> None:
    """Register prompt templates (1:1 with model groups).

    :param register: call with one :class:`~openmind.core.specs.TemplateSpec` per template.
    :returns: nothing.
    """


@hookspec
def openmind_register_datasets(register: Callable[[DatasetSpec], None]) -> None:
    """Register the standard dataset format of a training task (1:1 with the task).

    :param register: call with one :class:`~openmind.core.specs.DatasetSpec` per format.
    :returns: nothing.
    """


@hookspec
def openmind_register_hubs(register: Callable[[HubSpec], None]) -> None:
    """Register model/dataset hubs (download, upload, list).

    :param register: call with one :class:`~openmind.core.specs.HubSpec` per hub.
    :returns: nothing.
    """


@hookspec
def openmind_register_commands(register: Callable[[CommandSpec], None]) -> None:
    """Register CLI verbs. ``openmind --help`` lists them without importing their implementation.

    :param register: call with one :class:`~openmind.core.specs.CommandSpec` per verb.
    :returns: nothing.
    """


@hookspec
def openmind_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    """Register frameworks (``pt``, ``ms`` come from openmind-core through this same hook).

    ``FRAMEWORKS``-like lists, ``framework="auto"``, the ``framework`` argument's choices and
    availability checks are all computed from these specs.

    :param register: call with one :class:`~openmind.core.specs.FrameworkSpec` per framework.
    :returns: nothing.
    """


@hookspec
def openmind_register_argument_groups(register: Callable[[ArgumentGroupSpec], None]) -> None:
    """Register unified argument groups; their flags appear in ``--help`` of the verbs they name.

    :param register: call with one :class:`~openmind.core.specs.ArgumentGroupSpec` per group.
    :returns: nothing.
    """


@hookspec
def openmind_register_routes(register: Callable[[RouteSpec], None]) -> None:
    """Register HTTP routes of the serving app (``openmind deploy``, native backend).

    :param register: call with one :class:`~openmind.core.specs.RouteSpec` per (path, methods).
    :returns: nothing.
    """


@hookspec
def openmind_register_eval_kinds(register: Callable[[EvalKindSpec], None]) -> None:
    """Register kinds of evaluation tasks (how an evaluation item is scored).

    :param register: call with one :class:`~openmind.core.specs.EvalKindSpec` per kind.
    :returns: nothing.
    """


@hookspec
def openmind_register_config_dialects(register: Callable[[ConfigDialectSpec], None]) -> None:
    """Register configuration dialects: another tool's config keys (e.g. LLaMA-Factory's YAML)
    mapped onto openmind's arguments, passed through to the trainer or reported.

    :param register: call with one :class:`~openmind.core.specs.ConfigDialectSpec` per dialect.
    :returns: nothing.
    """


@hookspec
def openmind_env_info() -> dict[str, Any] | None:
    """Contribute lines to ``openmind env`` (e.g. devices a framework sees).

    Called only by ``openmind env``, so implementations may import their framework (guarded:
    a failure is reported, never raised).

    :returns: a mapping of label -> value, or ``None``.
    """


@hookspec(firstresult=True)
def openmind_infer_task(model_dir: str, config: dict[str, Any]) -> str | None:
    """Infer the task of a model folder from its ``config.json`` (``architectures``, ``model_type``).

    Stops at first non-None result.

    :param model_dir: the local model folder.
    :param config: the parsed ``config.json`` (empty when there is none).
    :returns: a registered task name, or ``None`` when this plugin cannot tell.
    """


@hookspec
def openmind_register_dataset_formats(register: Callable[[DatasetFormatSpec], None]) -> None:
    """Register input dataset formats (``formatting``) and their converters to the standard formats.

    ``openmind data validate --formatting NAME`` and training data loading use the converter; the
    ``formatting`` argument's choices are the registered names.

    :param register: call with one :class:`~openmind.core.specs.DatasetFormatSpec` per format.
    :returns: nothing.
    """


@hookspec
def openmind_register_rewards(register: Callable[[RewardSpec], None]) -> None:
    """Register reward functions of the online RL training stages (``grpo``).

    :param register: call with one :class:`~openmind.core.specs.RewardSpec` per reward.
    :returns: nothing.
    """
