"""Native templates: family renderers written in Python (no Jinja), fast and framework-neutral.

A native template builds the prompt as a list of ``(text, trainable)`` pieces in one pass, so
:meth:`~openmind.nlp.templates.base.Template.segments` is exact (label masks never depend on
re-rendering prefixes, which fails for templates such as Qwen3's that rewrite earlier turns).
Each family module documents how it treats the system prompt, tools and stop words, and every
family that publishes a Hugging Face ``chat_template`` is tested to render exactly what that
template renders.
"""

from __future__ import annotations

import abc
import json
from typing import Any

from openmind.nlp.templates.base import Message, Template, _alias_reasoning
from openmind.nlp.templates.errors import TP_BAD_MESSAGES

Pieces = list[tuple[str, bool]]


def tojson(value: Any, indent: int | None = None) -> str:
    """``tojson`` exactly as chat templates see it (transformers' filter: no ASCII escaping)."""
    return json.dumps(value, ensure_ascii=False, indent=indent)


class NativeTemplate(Template):
    """Base of the Python renderers. Subclasses implement :meth:`build`."""

    kind = "native"
    #: roles the family renders; anything else is a coded error (never silently dropped).
    roles: tuple[str, ...] = ("system", "user", "assistant", "tool")

    @abc.abstractmethod
    def build(
        self, messages: list[Message], tools: list[dict] | None, add_generation_prompt: bool, options: dict
    ) -> Pieces:
        """The conversation as ``(text, trainable)`` pieces, in order."""

    # ---- public API ------------------------------------------------------------------
    def render(
        self,
        messages: list[Message],
        *,
        tools: list[dict] | None = None,
        add_generation_prompt: bool = False,
        **options: Any,
    ) -> str:
        """The prompt string. ``options`` are family switches (e.g. ``enable_thinking`` for Qwen3)."""
        return "".join(text for text, _ in self._pieces(messages, tools, add_generation_prompt, options))

    def segments(self, messages: list[Message], *, tools: list[dict] | None = None, **options: Any) -> Pieces:
        merged: Pieces = []
        for text, trainable in self._pieces(messages, tools, False, options):
            if not text:
                continue
            if merged and merged[-1][1] == trainable:
                merged[-1] = (merged[-1][0] + text, trainable)
            else:
                merged.append((text, trainable))
        return merged

    # ---- helpers for subclasses ------------------------------------------------------
    def _pieces(self, messages, tools, add_generation_prompt, options) -> Pieces:
        self.check(messages)
        if self.options:
            options = {**self.options, **options}
        return self.build(_alias_reasoning(messages), tools, add_generation_prompt, options)

    def check(self, messages: list[Message]) -> None:
        if not isinstance(messages, (list, tuple)) or not messages:
            raise TP_BAD_MESSAGES.error(f"template {self.name!r}: messages must be a non-empty list of dicts")
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                raise TP_BAD_MESSAGES.error(
                    f"message {i} is {type(message).__name__}, not a dict", location=f"messages[{i}]"
                )
            role = message.get("role")
            if role not in self.roles:
                raise TP_BAD_MESSAGES.error(
                    f"template {self.name!r} has no role {role!r} (it renders: {', '.join(self.roles)})",
                    location=f"messages[{i}].role",
                )
            content = message.get("content")
            if content is None and role == "assistant" and message.get("tool_calls"):
                continue
            if not isinstance(content, str):
                raise TP_BAD_MESSAGES.error(
                    f"message {i} ({role}) has content {content!r}; templates take text content",
                    location=f"messages[{i}].content",
                )

    def fail(self, message: str, index: int | None = None, hint: str | None = None):
        location = f"messages[{index}]" if index is not None else None
        return TP_BAD_MESSAGES.error(f"template {self.name!r}: {message}", location=location, hint=hint)

    def alternate(self, messages: list[Message], offset: int = 0) -> None:
        """user/assistant/user/... as the Llama-2, Mistral and Gemma templates demand."""
        for i, message in enumerate(messages):
            if (message["role"] == "user") != (i % 2 == 0):
                raise self.fail(
                    "conversation roles must alternate user/assistant/user/assistant/...",
                    i + offset,
                    hint="Merge consecutive turns of one role, and start with a user turn.",
                )
