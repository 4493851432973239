"""Converters from common input layouts to the standard formats (:mod:`openmind.data.formats`).

Input ``formatting``:

* ``alpaca`` — ``instruction``, ``input``, ``output`` (+ ``system``, ``history`` of
  ``[prompt, response]`` pairs); with ``chosen``/``rejected`` strings it is a preference row.
* ``sharegpt`` — ``conversations``: ``[{"from": "human"|"gpt"|"system"|"function_call"|"observation",
  "value": ...}]`` (+ ``system``, ``tools``); preference rows carry ``chosen``/``rejected`` messages.
* ``openai`` / ``sft`` — ``messages``: ``[{"role", "content", "tool_calls"?}]`` (+ ``tools``).
* ``preference`` — ``prompt`` (text or messages) or ``messages``, plus ``chosen``/``rejected``
  (text, a message, or trl's conversational lists; full conversations sharing the prompt work too).
* ``pretrain`` — ``text``.

Target formats of the preference/RL stages: ``unpaired`` (``kto``) takes any conversation layout
plus the desirability column (LLaMA-Factory's ``kto_tag`` mapping; default column ``label``, as
trl's); ``prompts`` (``grpo``) takes any conversation layout: a final assistant turn (alpaca's
``output``) becomes the reference ``answer``, else the ``answer`` column (optional) is used.
* any format a plugin registers (:class:`~openmind.core.specs.DatasetFormatSpec`, hook
  ``openmind_register_dataset_formats``): its converter turns a row into one of the formats above.

Column names and role tags can be remapped (:class:`Mapping`, the same keys as LLaMA-Factory's
``dataset_info.json`` ``columns``/``tags``), so LLaMA-Factory datasets are read unchanged.

A converter returns ``(standard_row, problems)``; problems name the *source* field
(``conversations[3].from``) so the user finds them in their file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openmind.data.formats import MEDIA, Problem, message

#: the built-in input formats (registered by this package's plugin as DatasetFormatSpecs)
INPUT_FORMATS = ("alpaca", "sharegpt", "openai", "sft", "pretrain", "preference")


def plugin_formats() -> dict[str, Any]:
    """The registered input formats other than the built-ins: name -> DatasetFormatSpec."""
    from openmind.core.plugins import get_registry

    return {s.name: s for s in get_registry().all("dataset-format") if s.name not in INPUT_FORMATS}


def input_formats() -> tuple[str, ...]:
    """Every ``formatting`` value: the built-ins, then the plugins' formats."""
    return (*INPUT_FORMATS, *plugin_formats())


#: default source column for each standard role of a layout (LLaMA-Factory's defaults)
DEFAULT_COLUMNS: dict[str, dict[str, str]] = {
    "alpaca": {"prompt": "instruction", "query": "input", "response": "output"},
    "sharegpt": {"messages": "conversations"},
    "openai": {"messages": "messages"},
    "sft": {"messages": "messages"},
    "pretrain": {"text": "text"},
    "preference": {},
}
DEFAULT_TAGS: dict[str, dict[str, str]] = {
    "sharegpt": {
        "role_tag": "from",
        "content_tag": "value",
        "user_tag": "human",
        "assistant_tag": "gpt",
        "observation_tag": "observation",
        "function_tag": "function_call",
        "system_tag": "system",
    },
    "openai": {
        "role_tag": "role",
        "content_tag": "content",
        "user_tag": "user",
        "assistant_tag": "assistant",
        "observation_tag": "tool",
        "function_tag": "function_call",
        "system_tag": "system",
    },
}
COLUMN_KEYS = (
    "prompt",
    "query",
    "response",
    "history",
    "messages",
    "system",
    "tools",
    "images",
    "videos",
    "audios",
    "chosen",
    "rejected",
    "text",
    "kto_tag",
    "answer",
)
TAG_KEYS = tuple(DEFAULT_TAGS["sharegpt"])


@dataclass
class Mapping:
    """Column names (``columns``) and role tags (``tags``) of a source, over the layout defaults."""

    formatting: str
    columns: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    ranking: bool = False

    def column(self, key: str) -> str | None:
        if key in self.columns:
            return self.columns[key]
        return DEFAULT_COLUMNS.get(self.formatting, {}).get(key)

    def tag(self, key: str, style: str | None = None) -> str:
        style = style or ("openai" if self.formatting in ("openai", "sft", "preference") else "sharegpt")
        return self.tags.get(key) or DEFAULT_TAGS[style][key]

    def source_columns(self) -> set[str]:
        """Source columns the converter reads."""
        keys = set(DEFAULT_COLUMNS.get(self.formatting, {})) | set(self.columns)
        return {c for c in (self.column(k) for k in keys) if c}


def detect(columns: list[str] | set[str]) -> tuple[str, bool]:
    """Guess ``(formatting, ranking)`` from column names; ``("", False)`` when unknown."""
    cols = set(columns)
    ranking = {"chosen", "rejected"} <= cols
    if "conversations" in cols:
        return "sharegpt", ranking
    if "messages" in cols:
        return ("preference" if ranking else "openai"), ranking
    if "instruction" in cols:
        return "alpaca", ranking
    if ranking:
        return "preference", True
    if "text" in cols:
        return "pretrain", False
    for spec in plugin_formats().values():  # a plugin's format, recognised by its columns
        if spec.columns and set(spec.columns) <= cols:
            return spec.name, ranking
    return "", False


def _tools_json(value: Any) -> str | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _function_call(content: Any, where: str) -> tuple[str | None, list[Problem]]:
    """LLaMA-Factory's ``function_call`` turn (JSON of {name, arguments} or a list) -> tool_calls JSON."""
    try:
        parsed = json.loads(content) if isinstance(content, str) else content
    except json.JSONDecodeError as exc:
        return None, [Problem(where, f"a function_call turn must hold JSON ({exc.msg})")]
    calls = parsed if isinstance(parsed, list) else [parsed]
    out = []
    for call in calls:
        if not isinstance(call, dict) or "name" not in call:
            return None, [Problem(where, "a function_call turn must hold {name, arguments}")]
        args = call.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                pass
        out.append({"type": "function", "function": {"name": call["name"], "arguments": args}})
    return json.dumps(out, ensure_ascii=False), []


class Converter:
    """Source row -> ``(standard row, problems)`` for a target standard format."""

    def __init__(self, mapping: Mapping, target: str) -> None:
        self.mapping = mapping
        self.target = target
        self.fmt = mapping.formatting
        #: a plugin format's converter (row -> row in a built-in format) and the converter after it
        self.plugin: Any = None
        self.inner: Converter | None = None
        self.plugin_columns: tuple[str, ...] = ()
        if self.fmt not in INPUT_FORMATS:
            from openmind.data.errors import D_FORMAT

            spec = plugin_formats().get(self.fmt)
            if spec is None:
                raise D_FORMAT.error(
                    f"unknown formatting {self.fmt!r}; expected one of {', '.join(input_formats())}",
                    location="formatting",
                )
            if spec.produces not in INPUT_FORMATS:
                raise D_FORMAT.error(
                    f"dataset format {spec.name!r} ({spec.component}) converts to {spec.produces!r}, which is not "
                    f"a built-in format ({', '.join(INPUT_FORMATS)})",
                    location="formatting",
                )
            self.plugin = spec.load()
            self.plugin_columns = tuple(spec.columns)
            self.inner = Converter(Mapping(spec.produces, {}, dict(mapping.tags), mapping.ranking), target)
        #: per-row lookups computed once (the mapping does not change while rows are converted)
        self._required: list[tuple[str, str]] | None = None
        self._roles: dict[Any, tuple[str, str, dict[Any, str]]] = {}

    def required_columns(self) -> list[tuple[str, str]]:
        """(standard key, source column) pairs a row must provide."""
        m = self.mapping
        if self.plugin is not None:
            return [(c, m.column(c) or c) for c in self.plugin_columns]
        if self.fmt == "alpaca":
            keys = ["prompt"]
            if self.target in ("preference", "pairwise"):
                keys += ["chosen", "rejected"]
            elif self.target not in ("pretrain", "prompts"):
                keys += ["response"]
        elif self.fmt in ("sharegpt", "openai", "sft"):
            keys = ["messages"] + (["chosen", "rejected"] if self.target in ("preference", "pairwise") else [])
        elif self.fmt == "pretrain":
            keys = ["text"]
        else:
            keys = ["chosen", "rejected"]
        pairs = [(k, m.column(k) or k) for k in keys]
        if self.target == "unpaired":
            pairs.append(("kto_tag", self.kto_column()))
        return pairs

    def kto_column(self) -> str:
        """The source column of KTO's desirability flag: the ``kto_tag`` mapping, else ``label``."""
        return self.mapping.column("kto_tag") or "label"

    # ---- entry point ------------------------------------------------------------------
    def __call__(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        problems: list[Problem] = []
        if self._required is None:
            self._required = self.required_columns()
        for _, col in self._required:
            if row.get(col) is None:
                problems.append(Problem(col, "missing"))
        if problems:
            return {}, problems
        if self.plugin is not None:
            return self._plugin(row)
        try:
            if self.fmt == "alpaca":
                out, problems = self._alpaca(row)
            elif self.fmt in ("sharegpt", "openai", "sft"):
                out, problems = self._chat(row)
            elif self.fmt == "pretrain":
                out, problems = {"text": row.get(self.mapping.column("text") or "text")}, []
            else:
                out, problems = self._preference(row)
            if problems:
                return {}, problems
            return self._finish(row, out)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # a value of a shape no check above foresaw: this row is bad, the run is not broken
            return {}, [Problem("row", f"cannot read this {self.fmt} row: {type(exc).__name__}: {exc}")]

    def _plugin(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        """A plugin's converter, then the built-in converter of the format it produces. The plugin
        reports a bad row with ``ValueError("field: reason")`` (KeyError/TypeError name the row)."""
        try:
            converted = self.plugin(dict(row))
        except (ValueError, KeyError, TypeError) as exc:
            text = str(exc.args[0]) if exc.args else type(exc).__name__
            where, sep, reason = text.partition(": ")
            if not sep or " " in where:
                where, reason = "row", text
            return {}, [Problem(where, f"{reason} ({self.fmt} converter)")]
        if not isinstance(converted, dict):
            return {}, [Problem("row", f"the {self.fmt} converter returned {type(converted).__name__}, not a dict")]
        assert self.inner is not None
        return self.inner(converted)

    def _finish(self, row: dict[str, Any], out: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        m = self.mapping
        target = self.target
        if target == "pretrain":
            if "text" not in out:
                msgs = out.get("messages") or []
                out = {"text": msgs[0]["content"] if msgs else None}
            return {"text": out["text"]}, []
        if target in ("sft", "multimodal-sft"):
            out.setdefault("tools", _tools_json(row.get(m.column("tools") or "tools")))
        media_problems = []
        for media in MEDIA:
            col = m.column(media) or media
            value = row.get(col)
            if value is None and media not in m.columns and media[:-1] in row:
                col = media[:-1]  # LLaVA / ShareGPT-4V rows: one file in "image" (or "video", "audio")
                value = row.get(col)
            if value is not None and not isinstance(value, list):
                value = [value]
            if target == "multimodal-sft":
                out[media] = value or []
            elif value:
                media_problems.append(
                    Problem(col, f"has {len(value)} file(s): media rows need the multimodal-sft format (task mm-sft)")
                )
        if target in ("preference", "pairwise"):
            if "chosen" not in out:
                return {}, [Problem(m.column("chosen") or "chosen", "missing")]
            out.pop("tools", None)
        if target == "unpaired":
            out.setdefault("tools", _tools_json(row.get(m.column("tools") or "tools")))
            col = self.kto_column()
            label = row.get(col)
            if isinstance(label, int) and not isinstance(label, bool) and label in (0, 1):
                label = bool(label)
            elif isinstance(label, str) and label.strip().lower() in ("true", "false"):
                label = label.strip().lower() == "true"
            elif not isinstance(label, bool):
                return {}, [Problem(col, f"the kto_tag must be true or false, not {label!r}")]
            out["label"] = label
        if target == "prompts":
            out.pop("tools", None)
            messages = list(out.get("messages") or [])
            answer = out.get("answer", out.get("chosen"))  # a preference row: the chosen answer
            if messages and messages[-1]["role"] == "assistant":
                answer = messages.pop()["content"]
            elif answer is None:
                value = row.get(m.column("answer") or "answer")
                answer = value if value is None or isinstance(value, str) else str(value)
            out = {"messages": messages, "answer": answer}
        return out, media_problems

    # ---- layouts ----------------------------------------------------------------------
    def _system(self, row: dict[str, Any]) -> str | None:
        col = self.mapping.column("system")
        value = row.get(col) if col else None
        return value if isinstance(value, str) and value else None

    def _alpaca(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        m = self.mapping
        problems: list[Problem] = []
        messages: list[dict[str, Any]] = []
        system = self._system(row)
        if system:
            messages.append(message("system", system))
        hist_col = m.column("history")
        history = row.get(hist_col) if hist_col else None
        if history:
            if not isinstance(history, list):
                problems.append(Problem(hist_col, "must be a list of [prompt, response] pairs"))
            else:
                for i, pair in enumerate(history):
                    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                        problems.append(Problem(f"{hist_col}[{i}]", "must be a [prompt, response] pair"))
                        continue
                    messages += [message("user", pair[0]), message("assistant", pair[1])]
        query = []
        for key in ("prompt", "query"):
            col = m.column(key)
            value = row.get(col) if col else None
            if value is not None and not isinstance(value, str):
                problems.append(Problem(col, f"must be a string, not {type(value).__name__}"))
            elif value:
                query.append(value)
        messages.append(message("user", "\n".join(query)))
        if self.target == "prompts":
            return {"messages": messages, "answer": row.get(m.column("response") or "output")}, problems
        if self.target == "pretrain":
            return {"text": "\n".join(query)}, problems
        if self.target in ("preference", "pairwise"):
            return {
                "messages": messages,
                "chosen": row.get(m.column("chosen") or "chosen"),
                "rejected": row.get(m.column("rejected") or "rejected"),
            }, problems
        resp_col = m.column("response") or "output"
        messages.append(message("assistant", row.get(resp_col)))
        return {"messages": messages}, problems

    def _chat_messages(self, raw: Any, col: str) -> tuple[list[dict[str, Any]], list[Problem]]:
        m = self.mapping
        if not isinstance(raw, list):
            return [], [Problem(col, f"must be a list of messages, not {type(raw).__name__}")]
        style = None
        if self.fmt == "preference" and raw and isinstance(raw[0], dict) and "from" in raw[0]:
            style = "sharegpt"  # preference prompts may be written either way
        cached = self._roles.get(style)
        if cached is None:
            roles = {
                m.tag("user_tag", style): "user",
                m.tag("assistant_tag", style): "assistant",
                m.tag("observation_tag", style): "tool",
                m.tag("system_tag", style): "system",
                m.tag("function_tag", style): "function_call",
            }
            if self.fmt in ("openai", "sft", "preference") and style is None:  # standard role names always work
                roles.update({r: r for r in ("system", "user", "assistant", "tool")})
            cached = self._roles[style] = (m.tag("role_tag", style), m.tag("content_tag", style), roles)
        role_tag, content_tag, roles = cached
        out: list[dict[str, Any]] = []
        problems: list[Problem] = []
        for i, item in enumerate(raw):
            where = f"{col}[{i}]"
            if not isinstance(item, dict):
                problems.append(Problem(where, "a message must be an object"))
                continue
            tag = item.get(role_tag)
            role = roles.get(tag) if isinstance(tag, str) else None
            if role is None:
                known = ", ".join(sorted(k for k in roles if k))
                problems.append(Problem(f"{where}.{role_tag}", f"unknown role {tag!r}; expected one of {known}"))
                continue
            content = item.get(content_tag)
            if role == "function_call":
                calls, errs = _function_call(content, f"{where}.{content_tag}")
                problems += errs
                out.append(message("assistant", "", calls))
                continue
            out.append(message(role, content, item.get("tool_calls"), item.get("name")))
        return out, problems

    def _chat(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        m = self.mapping
        col = m.column("messages") or "messages"
        messages, problems = self._chat_messages(row.get(col), col)
        system = self._system(row)
        if system and not (messages and messages[0]["role"] == "system"):
            messages.insert(0, message("system", system))
        if self.target in ("preference", "pairwise"):
            chosen, p1 = self._answer(row, "chosen")
            rejected, p2 = self._answer(row, "rejected")
            return {"messages": messages, "chosen": chosen, "rejected": rejected}, problems + p1 + p2
        if self.target == "pretrain":
            return {"text": messages[0]["content"] if messages else None}, problems
        return {"messages": messages, "tools": _tools_json(row.get(m.column("tools") or "tools"))}, problems

    def _answer(self, row: dict[str, Any], key: str) -> tuple[Any, list[Problem]]:
        """A chosen/rejected answer given as text, a message or a one-message list."""
        col = self.mapping.column(key) or key
        value = row.get(col)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, dict):
            m = self.mapping
            role_tag, content_tag = (
                ("role", "content") if "role" in value else (m.tag("role_tag"), m.tag("content_tag"))
            )
            role = value.get(role_tag)
            if role not in ("assistant", m.tag("assistant_tag")):
                return None, [
                    Problem(f"{col}.{role_tag}", f"the {key} answer must be an assistant message, not {role!r}")
                ]
            return value.get(content_tag), []
        if value is None or isinstance(value, str):
            return value, []
        return None, [Problem(col, f"must be text or an assistant message, not {type(value).__name__}")]

    def _preference(self, row: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
        m = self.mapping
        problems: list[Problem] = []
        prompt_col = m.column("prompt") or ("prompt" if "prompt" in row else "messages")
        prompt = row.get(prompt_col)
        chosen_raw = row.get(m.column("chosen") or "chosen")
        rejected_raw = row.get(m.column("rejected") or "rejected")
        messages: list[dict[str, Any]] = []
        if prompt is None and isinstance(chosen_raw, list) and isinstance(rejected_raw, list):
            # implicit prompt (trl): two full conversations sharing the prompt turns
            n = 0
            while n < min(len(chosen_raw), len(rejected_raw)) - 1 and chosen_raw[n] == rejected_raw[n]:
                n += 1
            prompt = chosen_raw[:n]
            row = {
                **row,
                m.column("chosen") or "chosen": chosen_raw[n:],
                m.column("rejected") or "rejected": rejected_raw[n:],
            }
            if not prompt:
                problems.append(Problem(m.column("chosen") or "chosen", "chosen and rejected share no prompt turns"))
        if isinstance(prompt, str):
            messages = [message("user", prompt)]
        elif isinstance(prompt, list):
            messages, errs = self._chat_messages(prompt, prompt_col)
            problems += errs
        elif prompt is None:
            problems.append(Problem(prompt_col, "missing"))
        else:
            problems.append(Problem(prompt_col, f"must be text or a list of messages, not {type(prompt).__name__}"))
        system = self._system(row)
        if system and not (messages and messages[0]["role"] == "system"):
            messages.insert(0, message("system", system))
        chosen, p1 = self._answer(row, "chosen")
        rejected, p2 = self._answer(row, "rejected")
        return {"messages": messages, "chosen": chosen, "rejected": rejected}, problems + p1 + p2
