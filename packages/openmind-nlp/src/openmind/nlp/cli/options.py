"""Unified arguments (model, template, generation groups) -> ``openmind.pipeline(...)`` keywords."""

from __future__ import annotations

from typing import Any

from openmind.core import args as A
from openmind.core.errors import A_BAD_VALUE


def generative_tasks() -> tuple[str, ...]:
    """Tasks that take the generation arguments: registered with the ``generative`` capability."""
    from openmind.core.plugins import get_registry

    return get_registry().tasks_with("generative")


def chat_tasks() -> tuple[str, ...]:
    """Tasks that render messages through a template: registered with the ``chat`` capability."""
    from openmind.core.plugins import get_registry

    return get_registry().tasks_with("chat")


def __getattr__(name: str) -> tuple[str, ...]:
    # the former constants, now computed from the registry
    if name == "GENERATIVE_TASKS":
        return generative_tasks()
    if name == "CHAT_TASKS":
        return chat_tasks()
    raise AttributeError(name)


#: generation-group keys -> GenerationParams names
GENERATION_KEYS = {
    "max_new_tokens": "max_new_tokens",
    "do_sample": "do_sample",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "repetition_penalty": "repetition_penalty",
    "num_beams": "num_beams",
    "stop": "stop",
    "generation_seed": "seed",
}
TEMPLATE_KEYS = ("system", "tools", "template")


def pipeline_kwargs(args: A.Namespace, task: str) -> dict[str, Any]:
    """Keyword arguments of ``openmind.pipeline`` for ``task`` from resolved unified arguments.

    Arguments that do not apply to the task are an error when the user set them (nothing is
    silently dropped), and ignored when they are defaults.
    """
    model = args.model
    kwargs: dict[str, Any] = {
        "framework": model.framework,
        "device": model.device,
        "dtype": model.dtype,
        "batch_size": args.generation.batch_size,
        "adapter": model.adapter,
        "trust_remote_code": model.trust_remote_code,
        "allow_pickle": model.allow_pickle,
        "revision": model.revision,
        "hub": model.hub,
        # the CLI verbs print / write openmind's structured outputs (not 1.0's / transformers' shapes)
        "return_format": "openmind",
    }
    generative, chat = generative_tasks(), chat_tasks()
    if task in chat:
        kwargs["model_group"] = model.model_group
        for key in TEMPLATE_KEYS:
            kwargs[key] = args.get(key)
    if task in generative:
        for key, name in GENERATION_KEYS.items():
            kwargs[name] = args.get(key)
    not_for_task = [
        key
        for key in sorted(args.explicit)
        if (key in GENERATION_KEYS and task not in generative)
        or ((key in TEMPLATE_KEYS or key == "model_group") and task not in chat)
    ]
    if not_for_task:
        raise A_BAD_VALUE.error(
            f"{', '.join('--' + k.replace('_', '-') for k in not_for_task)} do(es) not apply to task {task!r}",
            hint=f"Remove them; generation arguments apply to {', '.join(generative)}; "
            f"template arguments to {', '.join(chat)}.",
        )
    return {k: v for k, v in kwargs.items() if v is not None}
