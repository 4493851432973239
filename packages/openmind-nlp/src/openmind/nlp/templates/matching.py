"""Match a model folder's ``config.json`` to a registered model group.

Candidates are the groups whose ``architectures`` / ``model_types`` the config names. Several
families share one architecture (Llama-2, Llama-3, DeepSeek LLM and Yi are all
``LlamaForCausalLM``; Qwen2 and Qwen2.5 are both ``Qwen2ForCausalLM``), so candidates are then
weighed with the evidence each :class:`~openmind.core.specs.ModelGroupSpec` declares: strings of
its chat_template, its vocabulary sizes and a pattern on the model's name. When the evidence does not single one out, the error lists the candidates and says how
to choose (``--model-group`` / ``--template``); it never guesses.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from openmind.nlp.templates.errors import M_AMBIGUOUS_GROUP, M_BAD_CONFIG, M_NO_GROUP, M_UNKNOWN_GROUP


def _group_names(registry) -> list[str]:
    from openmind.core.specs import ModelGroupSpec

    return sorted(g.name for g in registry.all(ModelGroupSpec))


def _registry(registry):
    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    return registry


def model_group(name: str, *, registry=None):
    """A registered group by name (OM-M203 with suggestions when unknown)."""
    from openmind.core.registry import suggest
    from openmind.core.specs import ModelGroupSpec

    registry = _registry(registry)
    found = registry.find(ModelGroupSpec, name)
    if found is None:
        names = _group_names(registry)
        raise M_UNKNOWN_GROUP.error(
            f"no model group named {name!r}.{suggest(name, names)} Known groups: {', '.join(names)}",
            location="--model-group",
        )
    return found


def _score(group, config: dict, template: str, names: str) -> float:
    """Weigh a candidate group with the evidence its spec declares (``template_markers``,
    ``template_excludes``, ``vocab_sizes``, ``name_pattern``, ``generic``)."""
    score = 0.5 if getattr(group, "generic", False) else 0.0
    if template:
        if any(marker in template for marker in getattr(group, "template_excludes", ())):
            return float("-inf")
        if any(marker in template for marker in getattr(group, "template_markers", ())):
            score += 4
    vocab = config.get("vocab_size")
    vocab_sizes = getattr(group, "vocab_sizes", ())
    if vocab_sizes and isinstance(vocab, int):
        if vocab not in vocab_sizes:
            return float("-inf")
        score += 1
    pattern = getattr(group, "name_pattern", "")
    if pattern and names and re.search(pattern, names):
        score += 2
    return score


def match_model_group(
    config: dict[str, Any],
    *,
    tokenizer_config: dict[str, Any] | None = None,
    registry=None,
    where: str = "config.json",
    name: str | None = None,
):
    """The registered :class:`~openmind.core.specs.ModelGroupSpec` a model belongs to.

    :param config: the parsed ``config.json``.
    :param tokenizer_config: the parsed ``tokenizer_config.json`` (its ``chat_template`` and
        ``name_or_path`` help tell apart families that share an architecture).
    :param name: the model's name or folder, more evidence of the same kind.
    :raises OpenMindError: OM-M201 when no group matches, OM-M202 when several remain.
    """
    from openmind.core.specs import ModelGroupSpec

    registry = _registry(registry)
    if not isinstance(config, dict):
        raise M_BAD_CONFIG.error(f"config is {type(config).__name__}, not a JSON object", location=where)
    tokenizer_config = tokenizer_config or {}
    architectures = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    model_type = config.get("model_type")
    scored = []
    for group in registry.all(ModelGroupSpec):
        base = 2 * bool(set(architectures) & set(group.architectures)) + (model_type in group.model_types)
        if base:
            scored.append((base, group))
    described = f"architectures={architectures or None}, model_type={model_type!r}"
    if not scored:
        raise M_NO_GROUP.error(
            f"{where}: {described} matches no registered model group (known: {', '.join(_group_names(registry))})",
            location=where,
        )
    top = max(base for base, _ in scored)
    candidates = [g for base, g in scored if base == top]
    if len(candidates) == 1:
        return candidates[0]
    template = tokenizer_config.get("chat_template") or ""
    if isinstance(template, list):  # several named templates
        template = " ".join(t.get("template", "") for t in template if isinstance(t, dict))
    names = " ".join(
        str(v) for v in (config.get("_name_or_path"), tokenizer_config.get("name_or_path"), name) if v
    ).lower()
    scores = {g.name: _score(g, config, template, names) for g in candidates}
    best = max(scores.values())
    winners = [g for g in candidates if scores[g.name] == best]
    if len(winners) == 1 and best > float("-inf"):
        return winners[0]
    remaining = winners if best > float("-inf") else candidates
    raise M_AMBIGUOUS_GROUP.error(
        f"{where}: {described} fits the model groups {', '.join(g.name for g in remaining)} and nothing in the "
        "config or tokenizer tells them apart",
        location=where,
        hint=f"Pass --model-group with one of: {', '.join(g.name for g in remaining)} (or --template NAME).",
    )


def read_json(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise M_BAD_CONFIG.error(f"{path.name} is not valid JSON: {exc}", location=str(path)) from exc
    if not isinstance(data, dict):
        raise M_BAD_CONFIG.error(f"{path.name} holds {type(data).__name__}, not a JSON object", location=str(path))
    return data


def tokenizer_config_of(model_dir: str | Path) -> dict:
    """``tokenizer_config.json`` with ``chat_template`` filled in from ``chat_template.jinja``
    (where transformers 5 saves it) when the JSON has none."""
    folder = Path(model_dir)
    data = read_json(folder / "tokenizer_config.json") or {}
    jinja = folder / "chat_template.jinja"
    if not data.get("chat_template") and jinja.is_file():
        data = {**data, "chat_template": jinja.read_text(encoding="utf-8")}
    processor = folder / "chat_template.json"  # processors (e.g. Qwen2-VL) keep theirs here
    if not data.get("chat_template") and processor.is_file():
        source = (read_json(processor) or {}).get("chat_template")
        if isinstance(source, str) and source:
            data = {**data, "chat_template": source}
    return data


def match_model_dir(model_dir: str | Path, *, registry=None):
    """:func:`match_model_group` for a local model folder."""
    folder = Path(model_dir)
    config = read_json(folder / "config.json")
    if config is None:
        raise M_BAD_CONFIG.error(f"{folder} has no config.json", location=str(folder / "config.json"))
    return match_model_group(
        config,
        tokenizer_config=tokenizer_config_of(folder),
        registry=registry,
        where=str(folder / "config.json"),
        name=str(folder.resolve()),
    )
