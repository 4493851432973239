"""The SDK entry points: ``openmind.pipeline`` and ``openmind.train``.

They dispatch through the registry to the task's wrapper (framework-neutral, from a domain
package such as openmind-nlp), which picks the per-framework pipeline or trainer. Nothing here
imports a framework.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openmind.core import errors as E
from openmind.core.frameworks import resolve_framework
from openmind.core.logs import logger
from openmind.core.plugins import attributed, get_host, get_registry
from openmind.core.specs import PipelineSpec, TaskSpec, TrainerSpec

M_NOT_FOUND = E.define(
    "OM-M001",
    "Model not found",
    "Pass an existing model folder, a run folder, or a hub id (hf::org/name, om::org/name).",
    E.ModelError,
)
M_NOT_A_MODEL = E.define(
    "OM-M002",
    "Folder is not a model",
    "A model folder holds config.json and weights (*.safetensors); check the path.",
    E.ModelError,
)


def read_config(model_dir: str | os.PathLike) -> dict[str, Any]:
    path = Path(model_dir) / "config.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise M_NOT_A_MODEL.error(f"{path} is not valid JSON: {exc}", location=str(path)) from None


def resolve_model(model: str | os.PathLike, *, revision: str | None = None, hub: str | None = None) -> str:
    """Turn what the user passed as a model into a local folder.

    A local folder is returned as is; a training run folder resolves to its model; anything
    else is treated as a hub id and pulled into the cache through the hub plugins.
    """
    from openmind.core.hub import ids, pull  # the hub machinery lives in core; clients load lazily

    text = str(model)
    prefixed = "::" in text or text.startswith("file://")
    path = Path(os.path.expanduser(text))
    if not prefixed and path.exists():
        return str(path)
    if not prefixed and not ids.looks_like_hub_id(text):
        raise M_NOT_FOUND.error(
            f"model {text!r} is neither an existing folder nor a hub id",
            hint="Check the path, or pass a hub id such as hf::org/name or om::org/name.",
        )
    # OPENMIND_OFFLINE=1 makes pull() resolve from the cache only (OM-H011 when it is not there)
    return str(pull(text, revision=revision, hub=hub))


def infer_task(model_dir: str) -> str:
    config = read_config(model_dir)
    task = get_host().pm.hook.openmind_infer_task(model_dir=str(model_dir), config=config)
    if not task:
        archs = ", ".join(config.get("architectures") or []) or "none"
        raise E.I_TASK_UNKNOWN_FOR_MODEL.error(
            f"cannot infer the task of {model_dir!r} (architectures: {archs}, model_type: {config.get('model_type')!r})"
        )
    return task


def select(kind: str, task: str, framework: str | None = "auto") -> tuple[PipelineSpec | TrainerSpec, str]:
    """Pick the pipeline (``kind="pipeline"``) or trainer for ``task`` on ``framework``.

    Among several backends of one framework, the highest priority whose requirements are
    installed wins; if none is installed, the highest priority one (its load will raise the
    install hint).
    """
    from openmind.core.requirements import missing

    registry = get_registry()
    specs = registry.pipelines_for(task) if kind == "pipeline" else registry.trainers_for(task)
    if not specs:
        from openmind.core.distributions import install_hint, providers

        names = providers(f"{kind}s", task)
        if names:
            raise E.I_NO_PIPELINE.error(
                f"no {kind} is registered for task {task!r}: {' or '.join(names)} registers one, and is not installed",
                hint="Install a backend: " + " or ".join(install_hint(n) for n in names),
            )
        raise E.I_NO_PIPELINE.error(f"no {kind} is registered for task {task!r}")
    frameworks = sorted({s.framework for s in specs})
    fw, reason = resolve_framework(framework, frameworks)
    candidates = [s for s in specs if s.framework == fw]
    if not candidates:
        raise E.I_NO_PIPELINE.error(
            f"task {task!r} has no {fw} {kind} (available: {', '.join(frameworks)})",
        )
    ready = [s for s in candidates if not missing(s.requires)]
    chosen = (ready or candidates)[0]
    return chosen, f"{reason}, backend {chosen.backend}"


def default_model(task: TaskSpec, framework: str | None = "auto") -> tuple[str, str | None]:
    """``(hub id, revision)`` of the task's registered default model for ``framework``.

    OM-A004 when the task has none (the user must pass a model).
    """
    if framework in (None, "", "auto"):
        framework = os.environ.get("OPENMIND_FRAMEWORK") or "auto"
    chosen = task.default_model(framework)
    if chosen is None:
        raise E.A_MISSING.error(
            f"no model given, and task {task.name!r} has no default model"
            + (f" for framework {framework!r}" if framework != "auto" else ""),
            hint="Pass model=PATH or a hub id (SDK) or --model (CLI); `openmind list tasks` shows the defaults.",
            location="model",
        )
    logger.info("no model given: using the default model of %s, %s", task.name, chosen.label())
    return chosen.model_id, chosen.revision or None


def pipeline(
    task: str | None = None,
    model: str | os.PathLike | None = None,
    *,
    framework: str = "auto",
    device: str = "auto",
    dtype: str = "auto",
    batch_size: int = 1,
    **kwargs: Any,
) -> Any:
    """Build the pipeline wrapper of ``task`` for ``model``.

    :param task: a task name or alias (``"chat"``, ``"text2emb"`` ...); inferred from the model
        folder when ``None``.
    :param model: a local folder, a run folder or a hub id; when ``None``, the task's registered
        default model (:class:`~openmind.core.specs.DefaultModel`) is pulled through the hub layer.
    :param framework: ``auto`` | ``pt`` | ``ms`` (``OPENMIND_FRAMEWORK`` when auto).
    :param device: ``auto`` | ``cpu`` | ``cuda:N`` | ``npu:N``.
    :param dtype: ``auto`` | ``float32`` | ``float16`` | ``bfloat16`` (or a ``torch.dtype``).

    openMind 1.0's and transformers' keywords are accepted too (``torch_dtype``, ``device_map``,
    ``model_kwargs``, ``backend``, ``config``, ``cache_dir``, model/tokenizer objects, an int
    ``device``): see :mod:`openmind.core.compat.pipeline_args`.

    Example::

        from openmind import pipeline
        chat = pipeline("chat", model="./my-model")
        chat([{"role": "user", "content": "Hi"}])
    """
    from openmind.core.compat.pipeline_args import normalise

    # openMind 1.0 / transformers keywords (torch_dtype, device_map, model_kwargs, backend, objects ...)
    kwargs.update(framework=framework, device=device, dtype=dtype)
    model = normalise(model, kwargs)
    framework, device, dtype = kwargs.pop("framework", "auto"), kwargs.pop("device"), kwargs.pop("dtype")
    registry = get_registry()
    if model is None and task is not None:
        model, revision = default_model(registry.task(task), framework)
        kwargs.setdefault("revision", revision)
    if model is not None:
        model = resolve_model(model, revision=kwargs.pop("revision", None), hub=kwargs.pop("hub", None))
    if task is None:
        if model is None:
            raise E.I_TASK_UNKNOWN_FOR_MODEL.error("pipeline() needs a task or a model")
        task = infer_task(str(model))
        logger.info("task inferred from the model: %s", task)
    spec = registry.task(task)
    wrapper = registry.pipeline_wrapper(spec.name)
    cls = wrapper.load()
    with attributed(wrapper.component):
        return cls(
            task=spec.name,
            model=model,
            framework=framework,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            **kwargs,
        )


def train(config: str | os.PathLike | dict | None = None, **overrides: Any) -> Any:
    """Run a training stage from a YAML file / mapping plus keyword overrides.

    Example::

        import openmind
        result = openmind.train("sft.yaml", learning_rate=1e-4)
    """
    from openmind.core import args as A

    stage = (
        overrides.get("stage")
        or (A.load_file(config).get("stage") if isinstance(config, (str, os.PathLike)) else (config or {}).get("stage"))
        or "sft"
    )
    from openmind.core.training.wrapper import stage_for_model, wrapper_for

    model = overrides.get("model") or (
        A.load_file(config).get("model") if isinstance(config, (str, os.PathLike)) else (config or {}).get("model")
    )
    routed = stage_for_model(stage, model)
    if routed != stage:
        overrides["stage"] = stage = routed
    wrapper = wrapper_for(stage)  # OM-T012 for a registered training task nothing can train
    cls = wrapper.load()
    with attributed(wrapper.component):
        return cls.from_config(config, **overrides)
