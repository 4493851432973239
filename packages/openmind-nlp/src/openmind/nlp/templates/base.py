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

from openmind.core.errors import TemplateError, define

IGNORE_INDEX = -100

TP_NO_TEMPLATE = define(
    "OM-TP001",
    "No chat template for this model",
    "Pass --template NAME (see `openmind list templates`) or --model-group NAME; a tokenizer with "
    "a chat_template is used as is.",
    TemplateError,
)
TP_BAD_MESSAGES = define(
    "OM-TP002",
    "Conversation does not fit the template",
    "Messages are a list of {role, content} with roles system/user/assistant/tool; check the order "
    "the template expects (e.g. a system message first).",
    TemplateError,
)
TP_RENDER = define(
    "OM-TP003",
    "Template failed to render",
    "The chat template raised while rendering; check the conversation against the model's expected format.",
    TemplateError,
)

Message = dict[str, Any]


@dataclass
class Encoded:
    """Token ids and labels of one conversation (``labels`` has ``IGNORE_INDEX`` where masked)."""

    input_ids: list[int]
    labels: list[int]
    #: index into ``input_ids`` where each message's tokens start (diagnostics, previews).
    offsets: list[int] = field(default_factory=list)


class Template(abc.ABC):
    #: registry name
    name: str = ""
    #: strings that end generation besides the tokenizer's EOS (e.g. "<|im_end|>")
    stop_words: tuple[str, ...] = ()

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
            pieces.append((full[len(prompt) :], True))
            done = full
        whole = self.render(messages, tools=tools, add_generation_prompt=False)
        if not whole.startswith(done):
            raise TP_RENDER.error(f"template {self.name!r}: prefix renders are inconsistent")
        if whole[len(done) :]:
            pieces.append((whole[len(done) :], False))
        return pieces

    def encode(
        self,
        tokenizer: Any,
        messages: list[Message],
        *,
        tools: list[dict] | None = None,
        train_on: str = "assistant",
    ) -> Encoded:
        """Token ids + labels. ``train_on``: ``assistant`` (every assistant turn), ``last`` (only the
        last assistant turn) or ``all`` (every token)."""
        pieces = self.segments(messages, tools=tools)
        last = max((i for i, (_, t) in enumerate(pieces) if t), default=-1)
        ids: list[int] = []
        labels: list[int] = []
        offsets: list[int] = []
        for i, (text, trainable) in enumerate(pieces):
            piece = tokenizer(text, add_special_tokens=False)["input_ids"]
            offsets.append(len(ids))
            ids += piece
            keep = train_on == "all" or (trainable and (train_on == "assistant" or i == last))
            labels += piece if keep else [IGNORE_INDEX] * len(piece)
        return Encoded(ids, labels, offsets)


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

    def _template(self):
        if self._compiled is None:
            from datetime import datetime

            from jinja2 import ext
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            def raise_exception(message: str):
                raise TP_RENDER.error(f"chat template: {message}")

            def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
                import json

                return json.dumps(
                    x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
                )

            env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[ext.loopcontrols])
            env.filters["tojson"] = tojson
            env.globals["raise_exception"] = raise_exception
            env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
            self._compiled = env.from_string(self.source)
        return self._compiled

    def render(
        self,
        messages: list[Message],
        *,
        tools: list[dict] | None = None,
        add_generation_prompt: bool = False,
        **extra: Any,
    ) -> str:
        from openmind.core.errors import OpenMindError

        try:
            return self._template().render(
                messages=messages,
                tools=tools,
                add_generation_prompt=add_generation_prompt,
                **self.special_tokens,
                **extra,
            )
        except OpenMindError:
            raise
        except Exception as exc:
            raise TP_RENDER.error(f"template {self.name!r}: {type(exc).__name__}: {exc}") from exc
