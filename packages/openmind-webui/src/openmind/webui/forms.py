"""Forms generated from the unified argument groups (:mod:`openmind.core.args`).

The page holds no list of options of its own: a field of a group becomes one input (a checkbox
for ``bool``, a dropdown for fields with choices, a number for ``int``/``float``, a text box for
strings, comma-separated lists and numbers that may be left empty), labelled with its key (the
same key as in the YAML file and ``--key`` flag) and described by its help text. Values are
converted and checked by core (:func:`openmind.core.args.convert` / :func:`~openmind.core.args.parse`),
so the page accepts and refuses exactly what ``openmind train CONFIG.yaml`` does.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any

from openmind.core import args as A

#: the verb whose argument groups the Train form shows
TRAIN_VERB = "train"
#: tri-state for ``bool | None`` fields (None: let openmind decide)
AUTO = "auto"


@dataclass(frozen=True)
class Field:
    """One field of an argument group, described for a form."""

    group: str
    name: str
    kind: str  # bool, tristate, choice, int, float, list, str
    optional: bool
    default: Any
    choices: tuple
    help: str
    hint: Any  # the type annotation, for openmind.core.args.convert


def _strip(tp: Any) -> tuple[Any, bool]:
    """(the type inside ``X | None``, whether None is allowed)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return (inner[0] if len(inner) == 1 else str), True
    return tp, False


def train_groups() -> tuple[str, ...]:
    """The argument groups ``openmind train`` takes, read from the registered verb itself."""
    from openmind.core.plugins import get_registry

    spec = get_registry().command(TRAIN_VERB)
    if spec is None:
        from openmind.core.errors import R_DANGLING

        raise R_DANGLING.error(
            "no plugin registers the `train` verb, so there is no training form to show",
            hint="Install openmind-nlp (it registers `openmind train`), e.g. pip install openmind-nlp openmind-pt.",
        )
    return tuple(spec.load().groups)


def fields(groups: typing.Iterable[str], only: typing.Iterable[str] | None = None) -> list[Field]:
    """The fields of ``groups`` in declaration order (``only``: keep these keys, in that order)."""
    out: dict[str, Field] = {}
    for group in groups:
        cls = A.GROUPS[group]
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            inner, optional = _strip(hints[f.name])
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
            choices = tuple(A.choices_of(f) or ())
            if inner is bool:
                kind = "tristate" if optional else "bool"
            elif choices:
                kind = "choice"
            elif typing.get_origin(inner) is list:
                kind = "list"
            elif inner in (int, float):
                kind = inner.__name__
            else:
                kind = "str"
            out[f.name] = Field(
                group, f.name, kind, optional, default, choices, f.metadata.get("help", ""), hints[f.name]
            )
    if only is None:
        return list(out.values())
    return [out[name] for name in only]


def initial(field: Field) -> Any:
    """The value an input shows for the field's default."""
    if field.kind == "tristate":
        return AUTO if field.default is None else ("true" if field.default else "false")
    if field.kind == "list":
        return ", ".join(map(str, field.default))
    if field.kind == "str" or (field.optional and field.kind in ("int", "float")):
        return "" if field.default is None else str(field.default)
    return field.default


def help_text(field: Field, lang: str = "en") -> str:
    """The field's help in ``lang`` (its own English help where no translation exists)."""
    if lang == "zh":
        from openmind.webui.help_zh import HELP_ZH

        return HELP_ZH.get(field.name, field.help)
    return field.help


def component(field: Field, gr: Any, value: Any = None, elem_prefix: str = "om", lang: str = "en") -> Any:
    """A Gradio input for ``field``, labelled with its key; ``value`` overrides the default. Its
    element id is ``<elem_prefix>-<key with dashes>``; the page's other elements use a double dash
    (``om-train--resume``), which no key can produce."""
    value = initial(field) if value is None else value
    common = {
        "label": field.name,
        "info": help_text(field, lang),
        "elem_id": f"{elem_prefix}-{field.name.replace('_', '-')}",
        "interactive": True,
        "min_width": 200,
    }
    if field.kind == "bool":
        return gr.Checkbox(value=bool(value), **common)
    if field.kind == "tristate":
        return gr.Dropdown(choices=[AUTO, "true", "false"], value=value, **common)
    if field.kind == "choice":
        return gr.Dropdown(choices=list(field.choices), value=value, **common)
    if field.kind in ("int", "float") and not field.optional:
        return gr.Number(value=value, precision=0 if field.kind == "int" else None, **common)
    return gr.Textbox(value=value, lines=1, max_lines=1, **common)


def raw(field: Field, value: Any) -> Any:
    """What an input holds, as the text/value that openmind's own parser takes."""
    if field.kind == "tristate":
        return None if value in (None, "", AUTO) else value
    if field.kind in ("int", "float"):
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if field.kind == "int" and isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if field.kind == "str":
        return None if value is None or str(value).strip() == "" else str(value).strip()
    if field.kind == "list":
        return "" if value is None else str(value)
    return value


def collect(form: list[Field], values: typing.Sequence[Any], where: str = "form") -> dict[str, dict[str, Any]]:
    """The values that differ from the defaults, converted and checked by core, nested by group
    (the layout of an argument file). Raises OM-A002 naming the field for a bad value."""
    nested: dict[str, dict[str, Any]] = {}
    for field, value in zip(form, values, strict=True):
        value = raw(field, value)
        if value is None and not field.optional and field.kind in ("int", "float", "str"):
            continue  # an emptied required box: keep the default
        converted = A.convert(field.name, value, field.hint, field.choices or None, where=f"{where} field {field.name}")
        if converted != field.default:
            nested.setdefault(field.group, {})[field.name] = converted
    return nested


def check(groups: typing.Iterable[str], nested: dict[str, dict[str, Any]]) -> A.Namespace:
    """Resolve ``nested`` exactly as ``openmind train CONFIG.yaml`` would (coded errors on misuse)."""
    return A.parse(list(groups), config={k: v for group in nested.values() for k, v in group.items()})


def to_yaml(nested: dict[str, dict[str, Any]]) -> str:
    import yaml

    return yaml.safe_dump(nested, sort_keys=False, allow_unicode=True)


def flatten(mapping: dict[str, Any]) -> dict[str, Any]:
    """A flat view of an argument file (flat, or nested by group) or of saved run arguments."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        if key in A.GROUPS and isinstance(value, dict):
            flat.update(value)
        else:
            flat[key] = value
    return flat
