"""Configuration dialects: other tools' config keys mapped onto openmind's arguments.

A dialect (LLaMA-Factory's YAML, openMind 1.0's ``openmind-cli train`` YAML, or one a plugin
registers with ``openmind_register_config_dialects``) is data: a :class:`Dialect` saying, for each
key of the other tool, what openmind does with it:

* :class:`Map` -- renamed to one of our keys (the value converted where the meaning differs);
  one note line per renamed key;
* :class:`PassThrough` -- handed unchanged to the trainer (``trainer_args``: transformers'
  ``TrainingArguments`` fields);
* :class:`Ignore` -- accepted and without effect here (e.g. ``do_train``), with a note;
* :class:`Unsupported` -- harmless at the tool's default value (noted), otherwise reported.

Every problem of a configuration (unknown keys with a suggestion, unsupported keys with what to do
instead) is reported at once, each with its ``file:line``. Keys of openmind's own arguments are
always accepted as they are, so a dialect file can mix in openmind keys.

Which dialect applies (:func:`detect`):

1. an explicit marker: a top-level ``dialect: NAME`` key in the file, ``--dialect NAME`` on the
   command line, or the ``dialect=`` argument of :func:`openmind.core.args.parse`;
2. else, when every key is an openmind key, none (plain openmind arguments);
3. else the registered dialect that knows the most of the keys openmind does not know; on a tie,
   the caller's preference (``openmind-cli``, 1.0's command, prefers ``openmind1``), then the
   dialect with the higher ``priority`` (``llamafactory``).
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: the top-level key that names a file's dialect explicitly.
MARKER = "dialect"
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Map:
    """Rename to ``target``; ``convert(value)`` returns the new value. Without ``target``,
    ``convert(value)`` returns a mapping of our keys to values (several keys, or none)."""

    target: str | None = None
    convert: Callable[[Any], Any] | None = None
    note: str = ""
    #: keys used instead of a target that the command does not take (1.0's export ``output_dir`` -> ``out``).
    alternatives: tuple[str, ...] = ()

    def apply(self, value: Any) -> dict[str, Any]:
        if self.target is None:
            return dict(self.convert(value)) if self.convert else {}
        return {self.target: self.convert(value) if self.convert else value}


@dataclass(frozen=True)
class PassThrough:
    """Handed as-is to the trainer through the ``trainer_args`` argument."""

    note: str = ""


@dataclass(frozen=True)
class Ignore:
    """Accepted without effect; ``reason`` says why that is right."""

    reason: str


@dataclass(frozen=True)
class Unsupported:
    """Not honoured. Harmless (noted) when the value equals ``default`` (the tool's own default)
    or is falsy when ``default`` is not given; otherwise reported with ``instead``."""

    instead: str
    default: Any = _NO_DEFAULT

    def harmless(self, value: Any) -> bool:
        if self.default is _NO_DEFAULT:
            return value in (None, False, "", [], {}, 0)
        return value == self.default or (value is None and self.default is None)


Rule = Map | PassThrough | Ignore | Unsupported


@dataclass
class Dialect:
    """One tool's configuration keys and what openmind does with each.

    :param name: registered name (``llamafactory``).
    :param title: human name (``LLaMA-Factory 0.9.5``).
    :param rules: key -> rule, for keys that need one.
    :param reference: every key of the tool with its default: a key listed here without a rule is
        :class:`Unsupported` (harmless at that default), unless it is an openmind key.
    :param passthrough: keys handed to the trainer (transformers' TrainingArguments) -> their default,
        whose type converts command-line strings (``dataloader_num_workers=0`` is the integer 0).
    :param defaults: openmind keys set when this dialect is used and the user did not set them
        (the tool's own defaults where they differ from openmind's).
    :param unsupported_hint: what to do about a reported key without its own ``instead``.
    """

    name: str
    title: str
    rules: dict[str, Rule] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)
    passthrough: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    unsupported_hint: str = "openmind has no equivalent; remove the key"
    #: called with the flat translated values (our key -> value) to fix up combinations; returns them.
    finalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: called with each pass-through key and value: a message when it cannot run here (a missing package).
    check_passthrough: Callable[[str, Any], str | None] | None = None

    def rule(self, key: str, native: Iterable[str] = ()) -> Rule | None:
        """The rule for ``key``; ``None`` when the dialect does not know it (or it is native)."""
        if key in self.rules:
            return self.rules[key]
        if key in native:
            return None
        if key in self.passthrough:
            return PassThrough()
        if key in self.reference:
            return Unsupported(self.unsupported_hint, self.reference[key])
        return None

    def knows(self, key: str) -> bool:
        return key in self.rules or key in self.passthrough or key in self.reference


@dataclass
class Translation:
    """The result of :func:`translate`."""

    #: our key -> (value, location) in order of appearance.
    values: dict[str, tuple[Any, str | None]]
    #: trainer pass-through key -> value.
    trainer_args: dict[str, Any]
    #: one line per renamed / ignored / harmless key.
    notes: list[str]
    #: (location, message, kind) of every key that cannot be honoured or is unknown; kind: True for
    #: an unknown key, False for an unsupported one, else the error code (a missing package: OM-X001).
    problems: list[tuple[str | None, str, bool | str]]
    dialect: Dialect | None


def coerce(value: Any, default: Any) -> Any:
    """A command-line string as the type of ``default`` (YAML scalars when the default is None)."""
    if not isinstance(value, str) or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            low = value.strip().lower()
            if low in ("true", "1", "yes", "on", "false", "0", "no", "off"):
                return low in ("true", "1", "yes", "on")
            return value
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        import yaml

        return yaml.safe_load(value)
    except (ValueError, Exception):
        return value


def _where(source: str | None, lines: dict[str, int], key: str) -> str | None:
    if source is None:
        return None
    line = lines.get(key)
    return f"{source}:{line}" if line else source


def registered() -> dict[str, tuple[Any, Dialect | None]]:
    """name/alias -> (spec, loaded dialect or None); dialects are loaded on demand by :func:`load`."""
    from openmind.core.plugins import get_registry

    out: dict[str, tuple[Any, Dialect | None]] = {}
    for spec in get_registry().all("config-dialect"):
        for name in (spec.name, *spec.aliases):
            out.setdefault(name, (spec, None))
    return out


def load(name: str) -> Dialect:
    """A registered dialect by name or alias; OM-C003 with suggestions when unknown."""
    from openmind.core.compat.errors import C_UNKNOWN_DIALECT

    table = registered()
    if name not in table:
        close = difflib.get_close_matches(name, list(table), n=3, cutoff=0.5)
        raise C_UNKNOWN_DIALECT.error(
            f"unknown configuration dialect {name!r}; registered: {', '.join(sorted(table)) or 'none'}"
            + (f". Did you mean {', '.join(map(repr, close))}?" if close else ""),
            location=MARKER,
        )
    return table[name][0].load()


def detect(keys: Iterable[str], native: Iterable[str], prefer: str | None = None) -> Dialect | None:
    """The dialect for a set of keys (rules 2 and 3 of the module docstring)."""
    native = set(native)
    foreign = [k for k in keys if k not in native]
    if not foreign:
        return None
    best: tuple[int, int, int, str] | None = None
    chosen: Dialect | None = None
    seen: set[str] = set()
    for _name, (spec, _) in registered().items():
        if spec.name in seen:
            continue
        seen.add(spec.name)
        dialect = spec.load()
        score = sum(1 for k in foreign if dialect.knows(k))
        if not score:
            continue
        rank = (score, int(spec.name == prefer or prefer in spec.aliases), spec.priority, spec.name)
        if best is None or rank > best:
            best, chosen = rank, dialect
    return chosen


def translate(
    mapping: dict[str, Any],
    *,
    dialect: Dialect | None,
    native: dict[str, str],
    wanted: set[str],
    source: str | None = None,
    lines: dict[str, int] | None = None,
) -> Translation:
    """Map one source's keys (a file or the command line) through ``dialect``.

    :param native: every openmind key -> its argument group.
    :param wanted: the groups the command takes (keys of other groups are problems).
    """
    lines = lines or {}
    values: dict[str, tuple[Any, str | None]] = {}
    trainer_args: dict[str, Any] = {}
    notes: list[str] = []
    problems: list[tuple[str | None, str, bool | str]] = []
    title = dialect.title if dialect else ""
    allowed = [k for k, g in native.items() if g in wanted]
    for raw_key, value in mapping.items():
        key = str(raw_key).replace("-", "_")
        where = _where(source, lines, str(raw_key))
        if key == MARKER:
            continue
        rule = dialect.rule(key, native) if dialect else None
        if rule is None:
            if key in native and native[key] in wanted:
                values[key] = (value, where)
            elif key in native and dialect is not None:
                # another tool's files mix keys of every stage (an export file names its template)
                notes.append(f"{where or 'argument'}: {title} key {raw_key!r} is not used by this command")
            elif key in native:
                problems.append(
                    (
                        where,
                        f"{raw_key!r} belongs to the {native[key]!r} arguments, which this command does not take",
                        True,
                    )
                )
            else:
                close = difflib.get_close_matches(key, allowed, n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                problems.append((where, f"unknown argument {raw_key!r}{hint}", True))
            continue
        if isinstance(rule, Map):
            try:
                mapped = rule.apply(value)
            except (TypeError, ValueError) as exc:
                problems.append((where, f"{raw_key!r}: {value!r} cannot be used: {exc}", False))
                continue
            used = {}
            for ours, new in mapped.items():
                target = ours if native.get(ours) in wanted else None
                target = target or next((a for a in rule.alternatives if native.get(a) in wanted), None)
                if target is None:
                    notes.append(f"{where or 'argument'}: {title} key {raw_key!r} is not used by this command")
                    continue
                values[target] = (new, where)
                used[target] = new
            mapped = used
            if mapped == {key: value}:
                continue  # the same key and value: nothing to say
            if mapped:
                shown = ", ".join(f"{k}: {v!r}" for k, v in mapped.items())
                notes.append(
                    f"{where or 'argument'}: {title} key {raw_key!r} -> {shown}"
                    + (f" ({rule.note})" if rule.note else "")
                )
            elif rule.note and value is not None:
                notes.append(f"{where or 'argument'}: {title} key {raw_key!r}: {rule.note}")
        elif isinstance(rule, PassThrough):
            trainer_args[key] = coerce(value, dialect.passthrough.get(key)) if dialect else value
            problem = (
                dialect.check_passthrough(key, trainer_args[key]) if dialect and dialect.check_passthrough else None
            )
            if problem:
                problems.append((where, f"{title} key {raw_key!r}: {problem}", "OM-X001"))
                continue
            notes.append(f"{where or 'argument'}: {title} key {raw_key!r} passed to the trainer (trainer_args)")
        elif isinstance(rule, Ignore):
            notes.append(f"{where or 'argument'}: {title} key {raw_key!r} ignored: {rule.reason}")
        elif rule.harmless(value):
            notes.append(f"{where or 'argument'}: {title} key {raw_key!r} ignored at its default value {value!r}")
        else:
            problems.append((where, f"{title} key {raw_key!r} ({value!r}) is not supported: {rule.instead}", False))
    return Translation(values, trainer_args, notes, problems, dialect)


def print_notes(notes: list[str]) -> None:
    """One line per note on stderr (the command line's way of saying what a dialect key became)."""
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
