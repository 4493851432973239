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
import os
from operator import itemgetter
from typing import Any

from openmind.nlp.templates.base import Message, Template, _alias_reasoning
from openmind.nlp.templates.errors import TP_BAD_MESSAGES

Pieces = list[tuple[str, bool]]


class FastMiss(Exception):
    """Raised by a :meth:`NativeTemplate.fast` renderer for a call it does not cover (tools, tool
    calls, options it does not read, a conversation the family refuses): the full path renders it
    or raises the coded error."""


#: what makes :meth:`NativeTemplate.render` leave the fast path for the full one: besides
#: :class:`FastMiss`, the errors a fast renderer hits on bad input (a missing key or unknown role
#: in its role table, non-text content in a string concatenation, a message that is not a dict)
_FAST_MISS = (FastMiss, KeyError, TypeError, AttributeError, IndexError)
_ROLE, _CONTENT, _ONLY_STR = itemgetter("role"), itemgetter("content"), {str}

try:  # openmind-speedups (optional): the layout render in C, the same text (tests render both ways)
    from openmind.speedups import fill_layout as _fill_layout
except ImportError:
    _fill_layout = None
if os.environ.get("OPENMIND_NO_SPEEDUPS", "").strip() not in ("", "0"):
    _fill_layout = None


def tojson(value: Any, indent: int | None = None) -> str:
    """``tojson`` exactly as chat templates see it (transformers' filter: no ASCII escaping)."""
    return json.dumps(value, ensure_ascii=False, indent=indent)


def alternates(roles: list[str]) -> bool:
    """user, assistant, user, ... (the fast renderers' check; the full path names the fault)."""
    users, answers = roles[::2], roles[1::2]
    return users.count("user") == len(users) and answers.count("assistant") == len(answers)


def around(roles, before: dict, after: dict, head: str = "", tail: str = "") -> list[str]:
    """The ``len(roles) + 1`` texts around the contents of messages with ``roles`` when each message
    is ``before[role] + content + after[role]``, after ``head`` and followed by ``tail`` (a
    :attr:`NativeTemplate.layout`); an unknown role is a ``KeyError``."""
    texts = [head]
    for role in roles:
        texts[-1] += before[role]
        texts.append(after[role])
    texts[-1] += tail
    return texts


class NativeTemplate(Template):
    """Base of the Python renderers. Subclasses implement :meth:`build`."""

    kind = "native"
    #: roles the family renders; anything else is a coded error (never silently dropped).
    roles: tuple[str, ...] = ("system", "user", "assistant", "tool")
    #: whether :meth:`build` reads a message's reasoning (``reasoning_content``, aliased from
    #: ``thinking``/``reasoning`` like transformers does); the alias copy is skipped otherwise
    reads_reasoning = False
    #: optional string-only renderer ``fast(messages, add_generation_prompt, options) -> str`` of
    #: the common case (a non-empty list of messages, no ``tools``): the same text as joining
    #: :meth:`build`'s pieces without building them (tests hold both to the official template).
    #: It raises :class:`FastMiss` (or fails on bad input) for anything else, which the full path
    #: then renders or refuses with the coded error. Rendering with Jinja costs 10-20 us even for
    #: the smallest templates: the per-message work here has to stay a dict lookup and a concat.
    fast = None
    #: optional ``layout(roles, add_generation_prompt) -> list[str]``, for families whose render is
    #: every message's content, as written, between texts that depend on the roles alone: the
    #: ``len(roles) + 1`` texts around the contents (:func:`around` builds them from per-role
    #: tables). :meth:`render` caches them per role sequence, so a conversation costs two C-level
    #: passes over the messages (roles, contents) and one join, with no Python code per message.
    #: It raises :class:`FastMiss` (or a ``KeyError`` in its tables) for role sequences it does not
    #: cover, which then take :attr:`fast` or the full path. Only for families whose text reads no
    #: options and no message keys besides ``role`` and ``content``; a subclass that redefines
    #: :meth:`build` without redefining ``layout`` does not inherit it.
    layout = None
    #: the layout holds only when the first message's content is not empty: otherwise the call goes
    #: to :attr:`fast` (the content-dependent special case of a family, e.g. Phi-3.5 leaving out an
    #: empty system message; its layout refuses a system message anywhere else)
    layout_needs_first_content = False
    #: the cached layouts of this instance, ``({roles: texts}, {roles: texts})`` with and without
    #: the generation prompt, the texts at the even places of a list whose odd places the
    #: contents fill (``None`` without a layout)
    _layouts: tuple[dict, dict] | None = None
    #: at most this many role sequences are cached per instance (then the cache starts over)
    layout_cache_size = 512
    #: ``openmind.speedups.fill_layout`` where openmind-speedups is installed (and not switched off
    #: with ``OPENMIND_NO_SPEEDUPS=1``), for instances with a layout: the cached layout filled in one
    #: C pass, the same text as the Python layout path, which it leaves every miss and bad input to
    _fill = None
    #: ``roles`` as a set, for :meth:`check` (kept in step by ``__init_subclass__``)
    _role_set: frozenset[str] = frozenset(roles)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._role_set = frozenset(cls.roles)
        if "build" in cls.__dict__ and "layout" not in cls.__dict__:
            cls.layout = None  # a new build() renders its own way: an inherited layout would not match it

    def __init__(self) -> None:
        if self.layout is not None:
            self._layouts = ({}, {})
            self._fill = _fill_layout

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
        layouts = self._layouts
        if layouts is not None and tools is None and self._fill is not None:
            out = self._fill(layouts[not add_generation_prompt], messages, self.layout_needs_first_content)
            if out is not None:  # None: a miss or input it does not cover, which the paths below take
                return out
        if layouts is not None and tools is None and messages.__class__ is list:
            try:  # the layout path (see ``layout``); any miss or bad input goes on to fast / full
                roles = tuple(map(_ROLE, messages))
                cache = layouts[not add_generation_prompt]
                out = cache.get(roles)
                if out is None:
                    out = self._new_layout(cache, roles, bool(add_generation_prompt))
                out = out[:]
                out[1::2] = map(_CONTENT, messages)
                if out[1] or not self.layout_needs_first_content:
                    return "".join(out)  # a TypeError for non-text content
            except _FAST_MISS:
                pass
        fast = self.fast
        if fast is not None and tools is None and messages.__class__ is list and messages:
            try:
                return fast(messages, add_generation_prompt, {**self.options, **options} if self.options else options)
            except _FAST_MISS:
                pass
        return "".join([text for text, _ in self._pieces(messages, tools, add_generation_prompt, options)])

    def _new_layout(self, cache: dict, roles: tuple, add_generation_prompt: bool) -> list:
        if not roles:
            raise FastMiss
        texts = self.layout(roles, add_generation_prompt)
        out = [None] * (2 * len(roles) + 1)
        out[0::2] = texts  # a ValueError (a bug, not a miss) unless len(roles) + 1 texts
        if len(cache) >= self.layout_cache_size:
            cache.clear()
        cache[roles] = out
        return out

    def segments(self, messages: list[Message], *, tools: list[dict] | None = None, **options: Any) -> Pieces:
        merged: Pieces = []
        texts: list[str] = []  # the texts of the run being merged (joined once, not pairwise)
        current = None
        for text, trainable in self._pieces(messages, tools, False, options):
            if not text:
                continue
            if trainable != current:
                if texts:
                    merged.append(("".join(texts), current))
                texts, current = [text], trainable
            else:
                texts.append(text)
        if texts:
            merged.append(("".join(texts), current))
        return merged

    # ---- helpers for subclasses ------------------------------------------------------
    def _pieces(self, messages, tools, add_generation_prompt, options) -> Pieces:
        self.check(messages)
        if self.options:
            options = {**self.options, **options}
        if self.reads_reasoning:
            messages = _alias_reasoning(messages)
        return self.build(messages, tools, add_generation_prompt, options)

    def check(self, messages: list[Message]) -> None:
        """Every message a dict with a role of the family and text content (an assistant turn with
        ``tool_calls`` may have none); a coded error naming the message otherwise."""
        try:  # the common case in two C-level passes; _check_each names the fault (or allows it)
            if (
                messages.__class__ is list
                and messages
                and self._role_set.issuperset(map(_ROLE, messages))
                and set(map(type, map(_CONTENT, messages))) == _ONLY_STR
            ):
                return
        except (KeyError, TypeError, AttributeError):
            pass
        self._check_each(messages)

    def _check_each(self, messages: list[Message]) -> None:
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
