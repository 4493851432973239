"""The template protocol: what any prompt template offers, and how a model folder's own
``chat_template`` is recognised (framework- and domain-neutral; imports nothing heavy).

A *template* turns a conversation (OpenAI-style messages, optional tools) into a prompt string
(``render``), the same string cut into ``(text, trainable)`` pieces (``segments``) and token ids
with label masks (``encode``). Domains register implementations with
:class:`~openmind.core.specs.TemplateSpec`; openmind-nlp ships the native family renderers and a
Jinja renderer for any model's own ``chat_template``.

A family publishes several *revisions* of its chat template over time (Llama 3.0 vs 3.1, Mistral
v1/v3/v7, ...). A native renderer declares the revisions it reproduces by the sha256 of their
normalised text (:func:`template_hash`); a model folder whose ``chat_template`` has one of those
hashes gets the native renderer, any other template is rendered by Jinja (never guessed).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol, runtime_checkable

from openmind.core.training.layout import IGNORE_INDEX  # noqa: F401  (the label masks' one home)

Message = dict[str, Any]


def normalise_template(source: str) -> str:
    """The text compared between a folder's ``chat_template`` and a known revision: line ends
    as ``\\n`` and no leading/trailing whitespace (editors and ``save_pretrained`` differ there,
    the rendered prompt does not)."""
    return source.replace("\r\n", "\n").replace("\r", "\n").strip()


def template_hash(source: str) -> str:
    """sha256 (hex) of :func:`normalise_template` of ``source`` — the key of a revision."""
    return hashlib.sha256(normalise_template(source).encode("utf-8")).hexdigest()


@runtime_checkable
class TemplateProtocol(Protocol):
    """What every template offers (native renderers and the Jinja one alike)."""

    #: registry name (``"jinja"`` for a model's own template)
    name: str
    #: strings that end generation besides the tokenizer's EOS
    stop_words: tuple[str, ...]

    def render(
        self, messages: list[Message], *, tools: list[dict] | None = None, add_generation_prompt: bool = False
    ) -> str:
        """The prompt string; with ``add_generation_prompt`` it ends where the answer starts."""
        ...

    def segments(self, messages: list[Message], *, tools: list[dict] | None = None) -> list[tuple[str, bool]]:
        """``render(messages)`` cut into ``(text, is_assistant_output)`` pieces, in order."""
        ...

    def encode(
        self, tokenizer: Any, messages: list[Message], *, tools: list[dict] | None = None, train_on: str = "assistant"
    ) -> Any:
        """Token ids and labels (``IGNORE_INDEX`` where not trained)."""
        ...


def find_revision(source: str, specs: Any) -> tuple[Any, str] | None:
    """The ``(TemplateSpec, revision label)`` whose declared revisions include ``source``'s
    normalised hash, or ``None``. ``specs`` are :class:`~openmind.core.specs.TemplateSpec`."""
    digest = template_hash(source)
    for spec in specs:
        for label, known in getattr(spec, "revisions", ()) or ():
            if known == digest:
                return spec, label
    return None
