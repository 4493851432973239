"""Choose the template for a model: explicit name, the model group's, or the tokenizer's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmind.core.errors import OpenMindError
from openmind.nlp.templates.base import JinjaTemplate, Template
from openmind.nlp.templates.errors import TP_NO_TEMPLATE, TP_UNKNOWN

#: ``--template jinja``: the tokenizer's own chat_template, whatever the group says.
JINJA = "jinja"


def load_template(name: str, *, registry=None) -> Template:
    """A registered template by name (OM-TP004 with suggestions when unknown)."""
    from openmind.core.registry import suggest
    from openmind.core.specs import TemplateSpec

    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    spec = registry.find(TemplateSpec, name)
    if spec is None:
        names = sorted(t.name for t in registry.all(TemplateSpec))
        raise TP_UNKNOWN.error(
            f"no template named {name!r}.{suggest(name, names)} Known templates: {', '.join(names)}, {JINJA}",
            location="--template",
        )
    made = spec.load()
    template = made() if isinstance(made, type) else made
    if getattr(spec, "tool_parser", ""):
        template.tool_parser = spec.tool_parser
    return template


def _special_tokens(tokenizer_config: dict) -> dict[str, str]:
    out = {}
    for key in ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"):
        value = tokenizer_config.get(key)
        if isinstance(value, dict):  # AddedToken as saved by transformers
            value = value.get("content")
        if isinstance(value, str):
            out[key] = value
    return out


def _own_template(tokenizer: Any, model_dir: str | Path | None) -> JinjaTemplate | None:
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        return JinjaTemplate.from_tokenizer(tokenizer)
    if model_dir is not None:
        from openmind.nlp.templates.matching import tokenizer_config_of

        tokenizer_config = tokenizer_config_of(model_dir)
        source = tokenizer_config.get("chat_template")
        if isinstance(source, list):
            source = next((t.get("template") for t in source if t.get("name") == "default"), None) or (
                source[0].get("template") if source else None
            )
        if source:
            special = _special_tokens(tokenizer_config)
            eos = special.get("eos_token")
            return JinjaTemplate(source, special_tokens=special, stop_words=(eos,) if eos else ())
    return None


def resolve_template(
    name: str | None = None,
    *,
    model_dir: str | Path | None = None,
    tokenizer: Any = None,
    model_group: Any = None,
    registry=None,
) -> Template:
    """The template to use, in this order:

    1. ``name`` (``--template``): a registered template, or ``"jinja"`` for the tokenizer's own;
    2. ``model_group`` (``--model-group``, a name or spec): the group's template;
    3. ``model_dir``: the group matched from its ``config.json``, then its template;
    4. the tokenizer's own ``chat_template`` (``tokenizer`` or the folder's tokenizer files);
    5. otherwise OM-TP001, saying what was tried.

    Example::

        from openmind.nlp.templates import resolve_template
        template = resolve_template(model_dir="./Qwen2.5-0.5B-Instruct")
        prompt = template.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    """
    from openmind.nlp.templates.matching import match_model_dir
    from openmind.nlp.templates.matching import model_group as group_named

    if name == JINJA:
        own = _own_template(tokenizer, model_dir)
        if own is None:
            raise TP_NO_TEMPLATE.error(
                "--template jinja needs a tokenizer with a chat_template, and none was found"
                + (f" in {model_dir}" if model_dir else ""),
                location="--template",
            )
        return own
    if name:
        return load_template(name, registry=registry)
    tried = []
    group = None
    if model_group is not None:
        group = group_named(model_group, registry=registry) if isinstance(model_group, str) else model_group
    elif model_dir is not None:
        try:
            group = match_model_dir(model_dir, registry=registry)
        except OpenMindError as exc:
            tried.append(f"[{exc.code}] {exc.message}")
    if group is not None:
        if group.template:
            return load_template(group.template, registry=registry)
        tried.append(f"model group {group.name!r} has no template")
    own = _own_template(tokenizer, model_dir)
    if own is not None:
        return own
    tried.append("the tokenizer has no chat_template")
    raise TP_NO_TEMPLATE.error("no template for this model: " + "; ".join(tried))
