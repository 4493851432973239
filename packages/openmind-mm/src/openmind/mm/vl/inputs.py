"""Messages + images -> a vision-language processor's inputs: the one function every VL path calls
(the chat pipeline, ``openmind deploy``, ``openmind chat``, the web UI and the multimodal SFT
preparation), so that they cannot drift apart.

Public API (stable)::

    from openmind.mm.vl.inputs import build_vl_inputs, render_vl_prompt, VLPrompt, batch_inputs

    features = build_vl_inputs(
        processor,                  # the model folder's transformers processor (AutoProcessor)
        messages,                   # OpenAI content parts, {"type": "image", ...} parts, or strings
                                    # with LLaMA-Factory <image> placeholders (then pass `images`)
        images=None,                # list of images for <image> placeholders / bare {"type": "image"}
        add_generation_prompt=True, # False for training rows (the whole conversation)
        limits=None,                # MediaLimits: counts, bytes, pixels, file roots, remote fetch
        return_tensors="pt",
        **processor_kwargs,         # passed to processor(...)
    )
    # -> the processor's BatchFeature (input_ids, attention_mask, pixel_values, image_grid_thw /
    #    image_sizes ...), batch of 1; features.prompt is the rendered text, features.images the
    #    loaded PIL images.

The text is rendered by the processor's own ``chat_template`` (the family's official template, so
the prompt is byte-identical to it by construction) and the visual tokens are expanded by the
processor itself (their number comes from the image processor, never guessed). Tokenization follows
``processor.apply_chat_template(..., tokenize=True)``: no second BOS when the template writes one.

Framework neutral: nothing here imports torch or transformers; the processor is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openmind.mm.vl.messages import NO_LIMITS, Conversation, MediaLimits, normalise_conversation

__all__ = ["VLPrompt", "batch_inputs", "build_vl_inputs", "render_vl_prompt"]


@dataclass
class VLPrompt:
    """One rendered conversation: the prompt text and its images (PIL), in placeholder order."""

    text: str
    images: list[Any] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


def _template_of(processor: Any) -> str:
    from openmind.nlp.templates.base import TP_NO_TEMPLATE

    template = getattr(processor, "chat_template", None) or getattr(
        getattr(processor, "tokenizer", None), "chat_template", None
    )
    if not template:
        raise TP_NO_TEMPLATE.error(
            "the model's processor has no chat_template (chat_template.jinja / chat_template.json)",
            hint="Copy the family's chat_template.jinja into the model folder (or save the processor with it).",
        )
    return template


def render_vl_prompt(
    processor: Any,
    messages: Any,
    images: list[Any] | None = None,
    *,
    add_generation_prompt: bool = True,
    limits: MediaLimits | None = None,
    where: str = "messages",
    where_images: str = "images",
    **template_kwargs: Any,
) -> VLPrompt:
    """Normalise and check ``messages`` (:func:`~openmind.mm.vl.messages.normalise_conversation`),
    render them with the processor's chat template; no tokenization yet."""
    conversation: Conversation = normalise_conversation(
        messages, images, limits=limits or NO_LIMITS, where=where, where_images=where_images
    )
    template = _template_of(processor)
    text = processor.apply_chat_template(
        conversation.messages,
        chat_template=template,
        add_generation_prompt=add_generation_prompt,
        tokenize=False,
        **template_kwargs,
    )
    return VLPrompt(text, conversation.images, conversation.messages)


def batch_inputs(
    processor: Any,
    prompts: list[VLPrompt],
    *,
    padding_side: str | None = None,
    return_tensors: str = "pt",
    **processor_kwargs: Any,
) -> Any:
    """One processor call over rendered prompts (a batch: padded on ``padding_side``; rows may have
    different numbers of images, including none)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    texts = [p.text for p in prompts]
    images = [image for p in prompts for image in p.images]
    kwargs = dict(processor_kwargs)
    bos = getattr(tokenizer, "bos_token", None)
    if bos is not None and texts and texts[0].startswith(bos):
        kwargs.setdefault("add_special_tokens", False)  # as processor.apply_chat_template(tokenize=True)
    if len(prompts) > 1:
        kwargs.setdefault("padding", True)
    previous = getattr(tokenizer, "padding_side", None)
    if padding_side is not None:
        tokenizer.padding_side = padding_side
    try:
        features = processor(text=texts, images=images or None, return_tensors=return_tensors, **kwargs)
    finally:
        if padding_side is not None:
            tokenizer.padding_side = previous
    return features


def build_vl_inputs(
    processor: Any,
    messages: Any,
    images: list[Any] | None = None,
    *,
    add_generation_prompt: bool = True,
    limits: MediaLimits | None = None,
    return_tensors: str = "pt",
    where: str = "messages",
    where_images: str = "images",
    **processor_kwargs: Any,
) -> Any:
    """The processor's inputs for one conversation (see the module docstring)."""
    prompt = render_vl_prompt(
        processor,
        messages,
        images,
        add_generation_prompt=add_generation_prompt,
        limits=limits,
        where=where,
        where_images=where_images,
    )
    features = batch_inputs(processor, [prompt], return_tensors=return_tensors, **processor_kwargs)
    features.prompt = prompt.text
    features.images = prompt.images
    return features
