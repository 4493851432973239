"""Phi-3 / Phi-3.5 instruction format."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, around

#: role -> the header before its content (every Phi-3 turn ends ``<|end|>\n``)
PHI3_HEADERS = {"system": "<|system|>\n", "user": "<|user|>\n", "assistant": "<|assistant|>\n"}
#: role -> (before, after) its content in Phi-4's format
PHI4_BEFORE = {"system": "<|im_start|>system<|im_sep|>", "user": "<|im_start|>user<|im_sep|>", "assistant": ""}
PHI4_AFTER = {"system": "<|im_end|>", "user": "<|im_end|><|im_start|>assistant<|im_sep|>", "assistant": "<|im_end|>"}
#: what follows every Phi-3 content
PHI3_AFTER = dict.fromkeys(PHI3_HEADERS, "<|end|>\n")


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
            if role == "assistant":
                pieces += [(PHI3_HEADERS[role], False), (content + "<|end|>", True), ("\n", False)]
            elif content or role != "system":
                pieces.append((PHI3_HEADERS[role] + content + "<|end|>\n", False))
        pieces.append((PHI3_HEADERS["assistant"], False) if add_generation_prompt else (self.eos, False))
        return pieces

    #: an empty system message is left out (``fast`` renders it): the layout takes a system message
    #: only first, and only with text
    layout_needs_first_content = True

    def layout(self, roles, add_generation_prompt) -> list[str]:
        if "system" in roles[1:]:
            raise FastMiss
        tail = PHI3_HEADERS["assistant"] if add_generation_prompt else self.eos
        return around(roles, PHI3_HEADERS, PHI3_AFTER, tail=tail)

    def fast(self, messages, add_generation_prompt, options) -> str:
        h = PHI3_HEADERS
        text = "<|end|>\n".join([h[m["role"]] + m["content"] for m in messages]) + "<|end|>\n"
        if "<|system|>\n<|end|>\n" in text:  # maybe an empty system message, which the template leaves out
            kept = [m for m in messages if m["content"] != "" or m["role"] != "system"]
            text = "".join([h[m["role"]] + m["content"] + "<|end|>\n" for m in kept])
        return text + (h["assistant"] if add_generation_prompt else self.eos)


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
            role = m["role"]
            pieces.append((PHI4_BEFORE[role] + m["content"] + PHI4_AFTER[role], role == "assistant"))
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:
        return around(roles, PHI4_BEFORE, PHI4_AFTER)


class Phi3MiniTemplate(Phi3Template):
    """microsoft/Phi-3-mini-4k-instruct (current revision): Phi-3.5's format, but an empty system
    message is kept (``<|system|>\\n<|end|>\\n``)."""

    name = "phi3-mini"

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for m in messages:
            role, content = m["role"], m["content"]
            if role == "assistant":
                pieces += [(PHI3_HEADERS[role], False), (content + "<|end|>", True), ("\n", False)]
            else:
                pieces.append((PHI3_HEADERS[role] + content + "<|end|>\n", False))
        pieces.append((PHI3_HEADERS["assistant"], False) if add_generation_prompt else (self.eos, False))
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:  # an empty system message is kept
        tail = PHI3_HEADERS["assistant"] if add_generation_prompt else self.eos
        return around(roles, PHI3_HEADERS, PHI3_AFTER, tail=tail)

    layout_needs_first_content = False
    fast = None
