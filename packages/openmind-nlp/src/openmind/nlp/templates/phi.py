"""Phi-3 / Phi-3.5 instruction format."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


class Phi3Template(NativeTemplate):
    """``<|system|>\\n{system}<|end|>\\n<|user|>\\n{user}<|end|>\\n<|assistant|>\\n{answer}<|end|>\\n``

    Like microsoft/Phi-3.5-mini-instruct: an empty system message is left out; a conversation
    rendered without a generation prompt ends with ``<|endoftext|>``. Trained: ``{answer}<|end|>``.
    """

    name = "phi3"
    eos = "<|endoftext|>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for m in messages:
            role, content = m["role"], m["content"]
            if role == "system" and content:
                pieces.append(("<|system|>\n" + content + "<|end|>\n", False))
            elif role == "user":
                pieces.append(("<|user|>\n" + content + "<|end|>\n", False))
            elif role == "assistant":
                pieces += [("<|assistant|>\n", False), (content + "<|end|>", True), ("\n", False)]
        pieces.append(("<|assistant|>\n", False) if add_generation_prompt else (self.eos, False))
        return pieces


class Phi4Template(NativeTemplate):
    """microsoft/phi-4: ChatML with ``<|im_sep|>`` and no newlines:
    ``<|im_start|>user<|im_sep|>{user}<|im_end|><|im_start|>assistant<|im_sep|>{answer}<|im_end|>``.

    Like the official template, every user turn ends with the assistant header (the generation
    prompt is always there). Trained: ``{answer}<|im_end|>``.
    """

    name = "phi4"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for m in messages:
            if m["role"] == "system":
                pieces.append(("<|im_start|>system<|im_sep|>" + m["content"] + "<|im_end|>", False))
            elif m["role"] == "user":
                text = "<|im_start|>user<|im_sep|>" + m["content"] + "<|im_end|><|im_start|>assistant<|im_sep|>"
                pieces.append((text, False))
            else:
                pieces.append((m["content"] + "<|im_end|>", True))
        return pieces


class Phi3MiniTemplate(Phi3Template):
    """microsoft/Phi-3-mini-4k-instruct (current revision): Phi-3.5's format, but an empty system
    message is kept (``<|system|>\\n<|end|>\\n``)."""

    name = "phi3-mini"

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for m in messages:
            role, content = m["role"], m["content"]
            if role == "system":
                pieces.append(("<|system|>\n" + content + "<|end|>\n", False))
            elif role == "user":
                pieces.append(("<|user|>\n" + content + "<|end|>\n", False))
            elif role == "assistant":
                pieces += [("<|assistant|>\n", False), (content + "<|end|>", True), ("\n", False)]
        pieces.append(("<|assistant|>\n", False) if add_generation_prompt else (self.eos, False))
        return pieces
