"""Reward functions of the online RL stage ``grpo`` (trl's signature: ``reward(prompts, completions,
**columns) -> list[float | None]``; dataset columns such as ``answer`` arrive as keyword lists).

Built in (registered as :class:`~openmind.core.specs.RewardSpec` by openmind-pt's plugin):

* ``exact_match`` — 1.0 when the completion, stripped, equals the reference ``answer`` (stripped);
* ``regex:PATTERN`` — 1.0 when the completion matches ``PATTERN`` (``re.search``);
* ``length[:N]`` — ``-|len(completion) - N| / N`` in characters (closer to N is better; N defaults to 100).

``--reward-funcs`` also takes ``module:function`` (any importable callable with that signature);
Python callables can be passed directly to :func:`openmind.train` as ``reward_funcs=[fn, ...]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from openmind.core.training.errors import T_REWARD

Reward = Callable[..., list]


def _text(completion: Any) -> str:
    """A completion as text (trl passes strings, or message lists for conversational prompts)."""
    if isinstance(completion, list):
        return "".join(str(m.get("content", "")) for m in completion if isinstance(m, dict))
    return str(completion)


def exact_match(param: str | None = None) -> Reward:
    def exact_match(prompts, completions, answer=None, **_: Any) -> list[float]:
        if answer is None:
            raise T_REWARD.error("exact_match needs an 'answer' column (the reference answer of each prompt)")
        return [float(_text(c).strip() == str(a).strip()) for c, a in zip(completions, answer)]

    return exact_match


def regex(param: str | None = None) -> Reward:
    if not param:
        raise T_REWARD.error("regex needs a pattern: --reward-funcs 'regex:PATTERN'", location="reward_funcs")
    try:
        pattern = re.compile(param)
    except re.error as exc:
        raise T_REWARD.error(f"regex pattern {param!r} is invalid ({exc})", location="reward_funcs") from None

    def regex_match(prompts, completions, **_: Any) -> list[float]:
        return [float(pattern.search(_text(c)) is not None) for c in completions]

    return regex_match


def length(param: str | None = None) -> Reward:
    try:
        target = int(param) if param else 100
    except ValueError:
        target = 0
    if target <= 0:
        raise T_REWARD.error(f"length takes a positive number of characters, not {param!r}", location="reward_funcs")

    def length_reward(prompts, completions, **_: Any) -> list[float]:
        return [-abs(len(_text(c)) - target) / target for c in completions]

    return length_reward


def resolve_rewards(names: list[Any]) -> list[Reward]:
    """``--reward-funcs`` entries -> callables: Python callables as they are, registered names
    (``NAME`` or ``NAME:PARAM``), else ``module:function``. OM-T013 for anything else."""
    from openmind.core.lazy import import_string
    from openmind.core.plugins import get_registry

    if not names:
        raise T_REWARD.error("grpo needs at least one reward function (--reward-funcs)", location="reward_funcs")
    registered = {s.name: s for s in get_registry().all("reward")}
    out: list[Reward] = []
    for entry in names:
        if callable(entry):
            out.append(entry)
            continue
        entry = str(entry)
        name, sep, param = entry.partition(":")
        spec = registered.get(name)
        if spec is not None:
            if spec.takes_param == "required" and not param:
                raise T_REWARD.error(f"reward {name!r} needs a parameter: {name}:VALUE", location="reward_funcs")
            if spec.takes_param == "no" and sep:
                raise T_REWARD.error(f"reward {name!r} takes no parameter (got {entry!r})", location="reward_funcs")
            out.append(spec.load()(param or None))
            continue
        if sep and name and param:
            try:
                fn = import_string(entry, feature=f"reward function {entry}")
            except Exception as exc:  # noqa: BLE001 - reported with the code below
                raise T_REWARD.error(
                    f"cannot import reward function {entry!r} ({exc})", location="reward_funcs"
                ) from None
            if not callable(fn):
                raise T_REWARD.error(f"{entry!r} is not callable", location="reward_funcs")
            out.append(fn)
            continue
        raise T_REWARD.error(
            f"unknown reward function {entry!r}; registered: {', '.join(sorted(registered)) or 'none'}, "
            "or give module:function",
            location="reward_funcs",
        )
    return out
