"""The template contract: framework-neutral prompt rendering and training-time encoding.

A :class:`Template` turns a conversation (OpenAI-style messages, optional tools) into

* ``render(...)`` — the prompt string, identical to the model's official Hugging Face
  ``chat_template`` where the family has one (fidelity is tested);
* ``segments(...)`` — the same string cut into ``(text, trainable)`` pieces, where
  ``trainable`` marks text produced by the assistant (what training puts labels on);
* ``encode(tokenizer, ...)`` — token ids with per-message label masks
  (``labels[i] == IGNORE_INDEX`` where not trained).

Templates never import a framework; ``tokenizer`` is any object with the Hugging Face tokenizer
call interface (``tokenizer(text, add_special_tokens=False)["input_ids"]``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from openmind.core.errors import OpenMindError
from openmind.core.templates import IGNORE_INDEX
from openmind.nlp.templates.errors import TP_BAD_TRAIN_ON, TP_NO_TEMPLATE, TP_RENDER

Message = dict[str, Any]


@dataclass
class Encoded:
    """Token ids and labels of one conversation (``labels`` has ``IGNORE_INDEX`` where masked)."""

    input_ids: list[int]
    labels: list[int]
    #: index into ``input_ids`` where each message's tokens start (diagnostics, previews).
    offsets: list[int] = field(default_factory=list)


class Template(abc.ABC):
    """Implements :class:`openmind.core.templates.TemplateProtocol`."""

    #: registry name
    name: str = ""
    #: strings that end generation besides the tokenizer's EOS (e.g. "<|im_end|>"); set from the
    #: :class:`~openmind.core.specs.TemplateSpec` by :func:`~openmind.nlp.templates.load_template`
    stop_words: tuple[str, ...] = ()
    #: render options fixed by the registered name (e.g. ``enable_thinking=False``)
    options: dict[str, Any] = {}
    #: the official revision this template was chosen for (``""``: chosen by name)
    revision: str = ""
    #: the one-line notice explaining how the template was chosen (also logged)
    notice: str = ""
    #: how the family writes tool calls: a parser name of :mod:`openmind.nlp.templates.toolcalls`
    #: (``"hermes"``, ``"llama3_json"`` ...) or ``"module:attr"``; ``""`` = tool calls are not parsed
    tool_parser: str = ""

    @abc.abstractmethod
    def render(
        self, messages: list[Message], *, tools: list[dict] | None = None, add_generation_prompt: bool = False
    ) -> str:
        """The prompt string for ``messages``; with ``add_generation_prompt`` it ends where the
        assistant's answer starts."""

    def segments(self, messages: list[Message], *, tools: list[dict] | None = None) -> list[tuple[str, bool]]:
        """``render(messages)`` cut into ``(text, is_assistant_output)`` pieces, in order.

        The default derives the cuts from prefix renders (works for any template whose render of
        a prefix of the conversation is a prefix of the render of the whole).
        """
        pieces: list[tuple[str, bool]] = []
        done = ""
        for i, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            prompt = self.render(messages[:i], tools=tools, add_generation_prompt=True)
            full = self.render(messages[: i + 1], tools=tools, add_generation_prompt=False)
            if not (prompt.startswith(done) and full.startswith(prompt)):
                raise TP_RENDER.error(
                    f"template {self.name!r}: the render of message {i} does not extend the previous turns"
                )
            if prompt[len(done) :]:
                pieces.append((prompt[len(done) :], False))
            answer = full[len(prompt) :]
            # trained: the answer up to its end-of-turn marker; what the template writes after
            # (ChatML's "\n", a closing "</s>") is not, as in the native renderers
            kept = _through_marker(answer, message)
            pieces.append((kept, True))
            if answer[len(kept) :]:
                pieces.append((answer[len(kept) :], False))
            done = full
        whole = self.render(messages, tools=tools, add_generation_prompt=False)
        if not whole.startswith(done):
            raise TP_RENDER.error(f"template {self.name!r}: prefix renders are inconsistent")
        if whole[len(done) :]:
            pieces.append((whole[len(done) :], False))
        return _merged(pieces)

    def encode(
        self,
        tokenizer: Any,
        messages: list[Message],
        *,
        tools: list[dict] | None = None,
        train_on: str = "assistant",
    ) -> Encoded:
        """Token ids + labels. ``train_on``: ``assistant`` (every assistant turn), ``last`` (only the
        last assistant turn) or ``all`` (every token).

        The whole rendered string is tokenized at once, so ``input_ids`` are exactly what inference
        sees (tokenizing pieces apart would add SentencePiece word-start markers at every cut); a
        token carries a label when its first character lies in a trainable segment. Tokenizers
        without offset mappings (slow tokenizers) fall back to tokenizing segment by segment.
        """
        if train_on not in ("assistant", "last", "all"):
            raise TP_BAD_TRAIN_ON.error(
                f"train_on={train_on!r} is not one of assistant, last, all", location="train_on"
            )
        pieces = self.segments(messages, tools=tools)
        last = max((i for i, (_, t) in enumerate(pieces) if t), default=-1)
        keep = [train_on == "all" or (t and (train_on == "assistant" or i == last)) for i, (_, t) in enumerate(pieces)]
        text = "".join(p for p, _ in pieces)
        starts: list[int] = []
        pos = 0
        for piece, _ in pieces:
            starts.append(pos)
            pos += len(piece)
        try:
            enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            spans = enc["offset_mapping"]
        except (NotImplementedError, KeyError, TypeError, ValueError):
            spans = None
        if spans is None:
            ids: list[int] = []
            labels: list[int] = []
            offsets: list[int] = []
            for (piece, _), kept in zip(pieces, keep):
                piece_ids = tokenizer(piece, add_special_tokens=False)["input_ids"]
                offsets.append(len(ids))
                ids += piece_ids
                labels += piece_ids if kept else [IGNORE_INDEX] * len(piece_ids)
            return Encoded(ids, labels, offsets)
        import bisect

        ids = list(enc["input_ids"])
        labels = []
        offsets = [len(ids)] * len(pieces)
        for k, (token, (begin, _end)) in enumerate(zip(ids, spans)):
            seg = max(bisect.bisect_right(starts, begin) - 1, 0)
            offsets[seg] = min(offsets[seg], k)
            labels.append(token if keep[seg] else IGNORE_INDEX)
        for i in range(len(offsets) - 2, -1, -1):  # empty segments start where the next one does
            offsets[i] = min(offsets[i], offsets[i + 1])
        return Encoded(ids, labels, offsets)


def guess_tool_parser(source: str) -> str:
    """The tool-call parser a Hugging Face chat template's own instructions imply ("" if none)."""
    if "<tool_call>" in source:
        return "hermes"
    if "[TOOL_CALLS]" in source:
        return "mistral"
    if "<|python_tag|>" in source or '"parameters": dictionary of argument name' in source:
        return "llama3_json"
    return ""


class JinjaTemplate(Template):
    """Renders a Hugging Face ``chat_template`` (Jinja) exactly as ``apply_chat_template`` does."""

    def __init__(
        self,
        source: str,
        *,
        name: str = "jinja",
        special_tokens: dict[str, str] | None = None,
        stop_words: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.source = source
        self.stop_words = stop_words
        #: bos_token, eos_token, ... passed to the template like transformers does
        self.special_tokens = dict(special_tokens or {})
        self._compiled = None
        self.tool_parser = guess_tool_parser(source)

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, name: str = "jinja") -> JinjaTemplate:
        source = getattr(tokenizer, "chat_template", None)
        if isinstance(source, dict):  # several named templates: take the default
            source = source.get("default") or next(iter(source.values()))
        if not source:
            raise TP_NO_TEMPLATE.error(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no chat_template")
        special = {
            k: v for k, v in (getattr(tokenizer, "special_tokens_map", None) or {}).items() if isinstance(v, str)
        }
        eos = getattr(tokenizer, "eos_token", None)
        return cls(source, name=name, special_tokens=special, stop_words=(eos,) if eos else ())

    def segments(self, messages: list[Message], *, tools: list[dict] | None = None) -> list[tuple[str, bool]]:
        """Label cuts for any chat template, in three ways, the first that applies:

        1. prefix renders (exact, as :meth:`Template.segments`);
        2. per turn, when the generation prompt is not how the answer starts (e.g. a ``<think>``
           generation prompt): the answer's text is found within what its turn adds;
        3. when the template rewrites earlier turns (e.g. Qwen3's reasoning): each answer's text
           (and the end-of-turn word right after it) is found in order in the whole render.
        """
        try:
            return super().segments(messages, tools=tools)
        except OpenMindError as exc:
            if exc.code != TP_RENDER.code:
                raise
        whole = self.render(messages, tools=tools, add_generation_prompt=False)
        try:
            return self._turn_segments(messages, tools, whole)
        except _NoCut:
            return self._search_segments(messages, whole)

    def _answer_text(self, message: Message) -> str:
        content = message.get("content")
        if not isinstance(content, str):
            return ""
        return content.split("</think>")[-1].strip()

    def _turn_segments(self, messages, tools, whole) -> list[tuple[str, bool]]:
        pieces: list[tuple[str, bool]] = []
        done = ""
        for i, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            before = self.render(messages[:i], tools=tools, add_generation_prompt=False) if i else ""
            full = self.render(messages[: i + 1], tools=tools, add_generation_prompt=False)
            answer = self._answer_text(message)
            if not (before.startswith(done) and full.startswith(before) and answer):
                raise _NoCut
            turn = full[len(before) :]
            raw = message["content"].split("</think>")[-1]
            at = turn.rfind(raw) if raw.strip() else -1  # the answer as written, else as the template trims it
            if at < 0:
                at = turn.rfind(answer)
            if at < 0:
                raise _NoCut
            think = turn.rfind("<think>", 0, at)  # the reasoning block is the model's output too
            if think >= 0:
                at = think
            if before[len(done) :] + turn[:at]:
                pieces.append((before[len(done) :] + turn[:at], False))
            pieces.append((turn[at:], True))
            done = full
        if not whole.startswith(done):
            raise _NoCut
        if whole[len(done) :]:
            pieces.append((whole[len(done) :], False))
        return pieces

    def _search_segments(self, messages, whole) -> list[tuple[str, bool]]:
        pieces: list[tuple[str, bool]] = []
        cursor = 0
        import re

        marker = re.compile(r"<[^<>\s]{1,60}>|\[/?[A-Z_]{2,30}\]")
        for message in messages:
            if message.get("role") != "assistant":
                continue
            raw = message["content"].split("</think>")[-1] if isinstance(message.get("content"), str) else ""
            at = whole.find(raw, cursor) if raw.strip() else -1
            answer = raw
            if at < 0:
                answer = self._answer_text(message)
                at = whole.find(answer, cursor) if answer else -1
            if at < 0:
                raise TP_RENDER.error(
                    f"template {self.name!r}: cannot find an assistant answer in the rendered conversation to mask labels"
                )
            while at > cursor and whole[at - 1] == " ":  # "[/INST] answer": the space starts the answer's first token
                at -= 1
            think = whole.rfind("<think>", cursor, at)  # the reasoning block is the model's output too
            if think >= 0:
                at = think
            end = whole.index(answer, at) + len(answer)
            found = marker.match(whole, end)  # the end-of-turn marker right after the answer is trained
            if found:
                end = found.end()
            if whole[cursor:at]:
                pieces.append((whole[cursor:at], False))
            pieces.append((whole[at:end], True))
            cursor = end
        if whole[cursor:]:
            pieces.append((whole[cursor:], False))
        return pieces

    def _template(self):
        if self._compiled is None:
            self._compiled = _compile(self.source)
        return self._compiled

    def render(
        self,
        messages: list[Message],
        *,
        tools: list[dict] | None = None,
        add_generation_prompt: bool = False,
        **extra: Any,
    ) -> str:
        if self.options:
            extra = {**self.options, **extra}
        try:
            return self._template().render(
                messages=_alias_reasoning(messages),
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                **self.special_tokens,
                **extra,
            )
        except OpenMindError:
            raise
        except Exception as exc:
            raise TP_RENDER.error(f"template {self.name!r}: {type(exc).__name__}: {exc}") from exc


_MARKER = None


def _merged(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for text, trainable in pieces:
        if out and out[-1][1] == trainable:
            out[-1] = (out[-1][0] + text, trainable)
        elif text:
            out.append((text, trainable))
    return out


def _through_marker(turn: str, message: Message) -> str:
    """``turn`` (what an assistant turn adds) cut after the end-of-turn marker that follows the answer."""
    import re

    global _MARKER
    if _MARKER is None:
        _MARKER = re.compile(r"<[^<>\s]{1,60}>|\[/?[A-Z_]{2,30}\]")
    content = message.get("content")
    raw = content.split("</think>")[-1] if isinstance(content, str) else ""
    for text in (raw, raw.strip()):
        at = turn.rfind(text) if text.strip() else -1
        if at >= 0:
            end = at + len(text)
            found = _MARKER.match(turn, end)
            return turn[: found.end()] if found else turn[:end] + turn[end:] * (not turn[end:].isspace())
    return turn


class _NoCut(Exception):
    """Internal: per-turn cutting does not apply to this template."""


def _alias_reasoning(messages: list[Message]) -> list[Message]:
    """Like transformers: a message's reasoning is visible as ``reasoning_content`` and ``thinking``."""
    for message in messages:
        if isinstance(message, dict) and (
            "reasoning_content" in message or "thinking" in message or "reasoning" in message
        ):
            break
    else:  # nothing to alias (the common case): no copy
        return messages
    out = []
    for message in messages:
        if isinstance(message, dict):
            reasoning = next(
                (message[k] for k in ("reasoning_content", "thinking", "reasoning") if message.get(k) is not None), None
            )
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        out.append(message)
    return out


def _compile(source: str):
    """Compile a chat template in the sandbox ``transformers.apply_chat_template`` uses (same
    environment options, globals and filters), without importing transformers."""
    import json
    from datetime import datetime

    import jinja2
    from jinja2 import ext, nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(ext.Extension):
        # ``{% generation %}...{% endgeneration %}`` marks assistant text in some templates; it renders its body.
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message: str):
        raise TP_RENDER.error(f"chat template: {message}")

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args, **kwargs):  # noqa: N805 - the signature trick jinja's Namespace uses
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                if isinstance(name, str) and name.startswith("_"):
                    raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r} is not allowed")
            jinja2.utils.Namespace.__init__(self, attrs)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    env.globals["namespace"] = TemplateNamespace
    return env.from_string(source)
