"""Choose the template for a model: explicit name, the model group's, or the tokenizer's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmind.core.errors import OpenMindError
from openmind.nlp.templates.base import JinjaTemplate, Template
from openmind.nlp.templates.errors import TP_NO_TEMPLATE, TP_UNKNOWN

#: ``--template jinja``: the tokenizer's own chat_template, whatever the group says.
JINJA = "jinja"


def _find_spec(name: str, registry):
    """The TemplateSpec registered under ``name`` or claiming it as an alias (``None``)."""
    from openmind.core.specs import TemplateSpec

    spec = registry.find(TemplateSpec, name)
    if spec is not None:
        return spec
    for candidate in sorted(registry.all(TemplateSpec), key=lambda t: t.name):
        if name in candidate.aliases:
            return candidate
    return None


def instantiate(spec) -> Template:
    """The renderer a :class:`~openmind.core.specs.TemplateSpec` names, with the spec's stop words
    and options (the spec is the one place they are written)."""
    made = spec.load()
    template = made() if isinstance(made, type) else made
    template.name = spec.name
    template.stop_words = tuple(spec.stop_words)
    if spec.options:
        template.options = dict(spec.options)
    if getattr(spec, "tool_parser", ""):
        template.tool_parser = spec.tool_parser
    return template


def load_template(name: str, *, registry=None) -> Template:
    """A registered template by name or alias (OM-TP004 with suggestions when unknown)."""
    from openmind.core.registry import suggest
    from openmind.core.specs import TemplateSpec

    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    spec = _find_spec(name, registry)
    if spec is None:
        names = sorted(t.name for t in registry.all(TemplateSpec))
        aliases = sorted(a for t in registry.all(TemplateSpec) for a in t.aliases)
        raise TP_UNKNOWN.error(
            f"no template named {name!r}.{suggest(name, names + aliases)} Known templates: "
            f"{', '.join(names)}, {JINJA} (aliases: {', '.join(aliases)})",
            location="--template",
        )
    return instantiate(spec)


def _special_tokens(tokenizer_config: dict) -> dict[str, str]:
    out = {}
    for key in ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"):
        value = tokenizer_config.get(key)
        if isinstance(value, dict):  # AddedToken as saved by transformers
            value = value.get("content")
        if isinstance(value, str):
            out[key] = value
    return out


def _own_source(tokenizer: Any, model_dir: str | Path | None) -> tuple[str | None, dict[str, str]]:
    """The model's own chat_template text and special tokens (tokenizer first, then the folder)."""
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        source = tokenizer.chat_template
        if isinstance(source, dict):  # several named templates: take the default
            source = source.get("default") or next(iter(source.values()))
        special = {
            k: v for k, v in (getattr(tokenizer, "special_tokens_map", None) or {}).items() if isinstance(v, str)
        }
        return source, special
    if model_dir is not None:
        from openmind.nlp.templates.matching import tokenizer_config_of

        tokenizer_config = tokenizer_config_of(model_dir)
        source = tokenizer_config.get("chat_template")
        if isinstance(source, list):
            source = next((t.get("template") for t in source if t.get("name") == "default"), None) or (
                source[0].get("template") if source else None
            )
        if source:
            return source, _special_tokens(tokenizer_config)
    return None, {}


def _own_template(tokenizer: Any, model_dir: str | Path | None) -> JinjaTemplate | None:
    source, special = _own_source(tokenizer, model_dir)
    if not source:
        return None
    eos = special.get("eos_token")
    return JinjaTemplate(source, special_tokens=special, stop_words=(eos,) if eos else ())


def _notify(template: Template, notice: str) -> Template:
    from openmind.core.logs import logger

    template.notice = notice
    logger.info(notice)
    return template


def template_for_source(
    source: str, special: dict[str, str] | None = None, *, where: str = "", registry=None
) -> Template:
    """The renderer for a model's own ``chat_template`` text: the native renderer that declares
    its revision (same output, faster), else the text itself through Jinja, with a notice."""
    from openmind.core.specs import TemplateSpec
    from openmind.core.templates import find_revision, template_hash

    if registry is None:
        from openmind.core.plugins import get_registry

        registry = get_registry()
    where = where or "the tokenizer"
    found = find_revision(source, registry.all(TemplateSpec))
    if found is not None:
        spec, label = found
        template = instantiate(spec)
        template.revision = label
        return _notify(
            template, f"template: {where} has the official {label} chat_template; native renderer {spec.name!r}"
        )
    special = dict(special or {})
    eos = special.get("eos_token")
    template = JinjaTemplate(source, special_tokens=special, stop_words=(eos,) if eos else ())
    return _notify(
        template,
        f"template: {where} has its own chat_template (sha256 {template_hash(source)[:12]}) that matches no native "
        "renderer's revision; rendering it with Jinja",
    )


def _add_family_stop_words(template: JinjaTemplate, source: str, model_dir, model_group, registry) -> None:
    """A folder's own template through Jinja stops at its EOS, and at the end-of-turn words of its
    family's template that the folder's template writes too (``<|im_end|>`` for an InternLM2 folder of another revision)."""
    from openmind.nlp.templates.matching import match_model_dir
    from openmind.nlp.templates.matching import model_group as group_named

    try:
        if model_group is not None:
            group = group_named(model_group, registry=registry) if isinstance(model_group, str) else model_group
        elif model_dir is not None:
            group = match_model_dir(model_dir, registry=registry)
        else:
            return
        if not group.template:
            return
        family = load_template(group.template, registry=registry)
    except OpenMindError:
        return
    extra = tuple(w for w in family.stop_words if w in source and w not in template.stop_words)
    template.stop_words = tuple(template.stop_words) + extra


def resolve_template(
    name: str | None = None,
    *,
    model_dir: str | Path | None = None,
    tokenizer: Any = None,
    model_group: Any = None,
    registry=None,
) -> Template:
    """The template to use, in this order:

    1. ``name`` (``--template``): a registered template or alias, or ``"jinja"`` for the tokenizer's own;
    2. the model's own ``chat_template`` (``tokenizer``, else the folder's tokenizer_config.json,
       chat_template.jinja or chat_template.json): the native renderer that declares its revision
       (normalised sha256), else that template itself through Jinja — with a one-line notice;
    3. without one: the model group's default template (``model_group``, or the group matched
       from ``model_dir``'s config.json), named in the log;
    4. otherwise OM-TP001, saying what was tried.

    The chosen template's ``notice`` says which way it was chosen.

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
    source, special = _own_source(tokenizer, model_dir)
    if source:
        where = str(model_dir) if model_dir is not None else "the tokenizer"
        template = template_for_source(source, special, where=where, registry=registry)
        if isinstance(template, JinjaTemplate):
            _add_family_stop_words(template, source, model_dir, model_group, registry)
        return template
    tried = ["the tokenizer has no chat_template"]
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
            template = load_template(group.template, registry=registry)
            where = str(model_dir) if model_dir is not None else "the model"
            return _notify(
                template,
                f"template: {where} has no chat_template; using model group {group.name!r}'s default "
                f"template {template.name!r}",
            )
        tried.append(f"model group {group.name!r} has no template")
    raise TP_NO_TEMPLATE.error("no template for this model: " + "; ".join(tried))
