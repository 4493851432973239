"""Tool-call parsers: turn what a model family writes into OpenAI ``tool_calls``.

Each chat family writes function calls its own way; a template names the parser of its family in
its :class:`~openmind.core.specs.TemplateSpec` (``tool_parser="hermes"``), and a plugin's template
may name its own parser class as ``"module:attr"`` (a subclass of :class:`ToolParser`).

=================  =====================================================================  ===========
parser             what the model writes (official format of the family)                  families
=================  =====================================================================  ===========
``hermes``         ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`` ...   Qwen2.5, Qwen3, Hermes
``llama3_json``    ``{"name": ..., "parameters": {...}}`` (optionally ``<|python_tag|>``,   Llama 3.1 / 3.2 / 3.3
                   several separated by ``;``)
``mistral``        ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]`` or             Mistral / Mixtral
                   ``[TOOL_CALLS]name[ARGS]{...}`` (tokenizer v11+)
``glm4``           ``name\\n{...}`` (GLM-4-9B-chat's function-call turn)                      GLM-4
=================  =====================================================================  ===========

A parser is pure text processing: :meth:`ToolParser.parse` takes the whole generated text and
returns the content before the calls plus the calls; text that starts a call but does not parse is
reported as ``malformed`` (the server then returns it as text with ``finish_reason:
"malformed_tool_call"``), never an exception. :meth:`ToolParser.may_start` tells a streaming server
whether it can send text already or must hold it because a call may be starting.
"""

from __future__ import annotations

import abc
import importlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "ParsedCalls",
    "ToolCall",
    "ToolParser",
    "get_tool_parser",
    "register_tool_parser",
    "tool_parser_names",
]


@dataclass
class ToolCall:
    name: str
    #: the arguments as a JSON string (OpenAI's wire format)
    arguments: str
    id: str = field(default_factory=lambda: "call_" + uuid.uuid4().hex[:24])

    def openai(self, index: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        if index is not None:
            out["index"] = index
        return out


@dataclass
class ParsedCalls:
    """The text before the calls (``content``), the calls, and whether a call failed to parse."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    malformed: bool = False


def _arguments(value: Any) -> str | None:
    """Arguments as a JSON object string, or ``None`` when they are not an object."""
    if value is None:
        value = {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    return json.dumps(value, ensure_ascii=False)


def _call(obj: Any, args_key: tuple[str, ...] = ("arguments", "parameters")) -> ToolCall | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        return None
    raw = next((obj[k] for k in args_key if k in obj), {})
    arguments = _arguments(raw)
    return None if arguments is None else ToolCall(obj["name"], arguments)


def _json_values(text: str) -> list[Any] | None:
    """All JSON values in ``text`` separated by whitespace, ``;`` or ``,``; ``None`` if any part is not JSON."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        while at < len(text) and text[at] in " \t\r\n;,":
            at += 1
        if at >= len(text):
            return values
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return None
        values.append(value)


class ToolParser(abc.ABC):
    """Base class: subclasses set ``name``, ``start`` (the text that opens a call) and implement ``parse``."""

    name: ClassVar[str] = ""
    #: texts that open a tool call (a streaming server holds text that may begin one of these)
    starts: ClassVar[tuple[str, ...]] = ()
    #: whether calls may only appear at the very start of the answer (then other text is content)
    at_start_only: ClassVar[bool] = False
    #: whether the family writes several calls in one turn
    parallel: ClassVar[bool] = True

    @abc.abstractmethod
    def parse(self, text: str) -> ParsedCalls:
        """The calls in ``text`` (the whole answer) and the text around them."""

    def may_start(self, text: str) -> bool:
        """True when ``text`` (the answer so far) contains or may be the beginning of a call."""
        probe = text.lstrip() if self.at_start_only else text
        for start in self.starts:
            if self.at_start_only:
                if probe.startswith(start) or (len(probe) < len(start) and start.startswith(probe)):
                    return True
            elif start in text or any(text.endswith(start[:k]) for k in range(1, len(start))):
                return True
        return False

    def call_prefix(self, name: str) -> str | None:
        """What the model writes before the arguments of a call to ``name`` (grammar-enforced calls);
        ``None`` when this family's calls cannot be forced by a grammar (``tool_choice`` is then a 400)."""
        return None

    def call_suffix(self) -> str:
        """What the model writes after the arguments of a call (grammar-enforced calls)."""
        return ""


class HermesParser(ToolParser):
    """Qwen2.5 / Qwen3 / NousResearch Hermes: ``<tool_call>\\n{json}\\n</tool_call>`` blocks."""

    name = "hermes"
    starts = ("<tool_call>",)
    BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)

    def parse(self, text: str) -> ParsedCalls:
        at = text.find("<tool_call>")
        if at == -1:
            return ParsedCalls(text)
        content = text[:at].rstrip("\n")
        calls = []
        for match in self.BLOCK.finditer(text, at):
            body = match.group(1).strip()
            try:
                call = _call(json.loads(body))
            except ValueError:
                call = None
            if call is None:
                return ParsedCalls(text, [], malformed=True)
            calls.append(call)
        return ParsedCalls(content, calls)

    def call_prefix(self, name: str) -> str:
        return '<tool_call>\n{"name": ' + json.dumps(name) + ', "arguments": '

    def call_suffix(self) -> str:
        return "}\n</tool_call>"


class Llama3JsonParser(ToolParser):
    """Llama 3.1+ JSON tool calling: ``{"name": ..., "parameters": {...}}`` as the whole answer,
    optionally after ``<|python_tag|>``; several calls separated by ``;``."""

    name = "llama3_json"
    starts = ("<|python_tag|>", "{")
    at_start_only = True

    def parse(self, text: str) -> ParsedCalls:
        body = text.strip()
        tagged = body.startswith("<|python_tag|>")
        body = body.removeprefix("<|python_tag|>").strip()
        if not body.startswith("{"):
            # <|python_tag|> followed by code (built-in tools): the text is the answer (ipython role)
            return ParsedCalls(text, [], malformed=False) if not tagged else ParsedCalls(text, [], malformed=True)
        values = _json_values(body)
        if values is None:
            return ParsedCalls(text, [], malformed=True)
        calls = [_call(v) for v in values]
        if not calls or any(c is None for c in calls):
            return ParsedCalls(text, [], malformed=True)
        return ParsedCalls("", calls)  # type: ignore[arg-type]

    def call_prefix(self, name: str) -> str:
        return '{"name": ' + json.dumps(name) + ', "parameters": '

    def call_suffix(self) -> str:
        return "}"


class MistralParser(ToolParser):
    """Mistral: ``[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`` (v3 tokenizer) or
    ``[TOOL_CALLS]name[ARGS]{...}`` repeated (v11+ tokenizer)."""

    name = "mistral"
    starts = ("[TOOL_CALLS]",)

    def parse(self, text: str) -> ParsedCalls:
        at = text.find("[TOOL_CALLS]")
        if at == -1:
            return ParsedCalls(text)
        content = text[:at].rstrip()
        rest = text[at:]
        calls: list[ToolCall] = []
        for chunk in rest.split("[TOOL_CALLS]")[1:]:
            chunk = chunk.strip()
            if "[ARGS]" in chunk:  # v11: name[ARGS]{json}
                name, _, args = chunk.partition("[ARGS]")
                arguments = _arguments(args.strip() or "{}")
                if not name.strip() or arguments is None:
                    return ParsedCalls(text, [], malformed=True)
                calls.append(ToolCall(name.strip(), arguments))
                continue
            values = _json_values(chunk)
            if not values:
                return ParsedCalls(text, [], malformed=True)
            for value in values:
                for item in value if isinstance(value, list) else [value]:
                    call = _call(item)
                    if call is None:
                        return ParsedCalls(text, [], malformed=True)
                    calls.append(call)
        if not calls:
            return ParsedCalls(text, [], malformed=True)
        return ParsedCalls(content, calls)

    def call_prefix(self, name: str) -> str:
        return '[TOOL_CALLS] [{"name": ' + json.dumps(name) + ', "arguments": '

    def call_suffix(self) -> str:
        return "}]"


class GLM4Parser(ToolParser):
    """GLM-4-9B-chat: a function-call turn is ``{name}\\n{json arguments}`` (one call per turn)."""

    name = "glm4"
    at_start_only = True
    parallel = False
    HEAD = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\n(\{.*)$", re.DOTALL)

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names

    def may_start(self, text: str) -> bool:
        # a call starts with a bare function name on the first line: hold text until a line ends
        probe = text.lstrip()
        return "\n" not in probe or bool(self.HEAD.match(probe))

    def parse(self, text: str) -> ParsedCalls:
        match = self.HEAD.match(text)
        if match is None:
            return ParsedCalls(text)
        values = _json_values(match.group(2).strip())
        if not values or len(values) != 1 or not isinstance(values[0], dict):
            return ParsedCalls(text, [], malformed=True)
        return ParsedCalls("", [ToolCall(match.group(1), json.dumps(values[0], ensure_ascii=False))])

    def call_prefix(self, name: str) -> str:
        return name + "\n"


_PARSERS: dict[str, type[ToolParser]] = {}


def register_tool_parser(parser: type[ToolParser]) -> type[ToolParser]:
    """Add a parser class under its ``name`` (usable as a class decorator)."""
    if not parser.name:
        raise ValueError("a tool parser needs a name")
    _PARSERS[parser.name] = parser
    return parser


for _parser in (HermesParser, Llama3JsonParser, MistralParser, GLM4Parser):
    register_tool_parser(_parser)


def tool_parser_names() -> tuple[str, ...]:
    return tuple(sorted(_PARSERS))


def get_tool_parser(name: str) -> ToolParser:
    """The parser called ``name`` (a registered name or ``"module:attr"``); ``KeyError`` if unknown."""
    if ":" in name:
        module, _, attr = name.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        if not (isinstance(cls, type) and issubclass(cls, ToolParser)):
            raise KeyError(f"{name!r} is not a ToolParser subclass")
        return cls()
    if name not in _PARSERS:
        raise KeyError(f"unknown tool parser {name!r}; known: {', '.join(tool_parser_names())}")
    return _PARSERS[name]()
