"""Gemma-2 instruction format."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, alternates

#: role -> its turn header
HEADERS = {"user": "<start_of_turn>user\n", "assistant": "<start_of_turn>model\n"}


class Gemma2Template(NativeTemplate):
    """``<bos><start_of_turn>user\\n{user}<end_of_turn>\\n<start_of_turn>model\\n{answer}<end_of_turn>\\n``

    Like google/gemma-2-*-it: no system role (a coded error, as the official template raises),
    turns alternate, contents are stripped. Trained: ``{answer}<end_of_turn>``.
    """

    name = "gemma2"
    bos = "<bos>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        for i, m in enumerate(messages):
            if m["role"] == "system":
                raise self.fail(
                    "Gemma has no system role", i, hint="Put the instructions at the start of the first user message."
                )
        self.alternate(messages)
        pieces: Pieces = [(self.bos, False)]
        for m in messages:
            if m["role"] == "user":
                pieces.append(("<start_of_turn>user\n" + m["content"].strip() + "<end_of_turn>\n", False))
            else:
                pieces += [
                    ("<start_of_turn>model\n", False),
                    (m["content"].strip() + "<end_of_turn>", True),
                    ("\n", False),
                ]
        if add_generation_prompt:
            pieces.append(("<start_of_turn>model\n", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        if not alternates([m["role"] for m in messages]):
            raise FastMiss
        h = HEADERS
        text = self.bos + "".join([h[m["role"]] + m["content"].strip() + "<end_of_turn>\n" for m in messages])
        return text + h["assistant"] if add_generation_prompt else text


class Gemma3Template(NativeTemplate):
    """Gemma 3 instruction-tuned (text part):
    ``<bos><start_of_turn>user\\n{system}\\n\\n{user}<end_of_turn>\\n<start_of_turn>model\\n{answer}<end_of_turn>\\n``.

    Like the official template: a first system message is put in front of the first turn
    (followed by a blank line), turns alternate, contents are stripped. Images need the model's
    own template (``--template jinja``). Trained: ``{answer}<end_of_turn>``.
    """

    name = "gemma3"
    bos = "<bos>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        prefix, loop, offset = "", messages, 0
        if messages[0]["role"] == "system":
            prefix, loop, offset = messages[0]["content"] + "\n\n", messages[1:], 1
        self.alternate(loop, offset)
        pieces: Pieces = [(self.bos, False)]
        for i, m in enumerate(loop):
            head = "<start_of_turn>" + ("model" if m["role"] == "assistant" else m["role"]) + "\n"
            head += prefix if i == 0 else ""
            if m["role"] == "assistant":
                pieces += [(head, False), (m["content"].strip() + "<end_of_turn>", True), ("\n", False)]
            else:
                pieces.append((head + m["content"].strip() + "<end_of_turn>\n", False))
        if add_generation_prompt:
            pieces.append(("<start_of_turn>model\n", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        prefix = ""
        if messages[0]["role"] == "system":
            prefix = messages[0]["content"] + "\n\n"
            messages = messages[1:]
        if not messages or not alternates([m["role"] for m in messages]):
            raise FastMiss
        h = HEADERS
        first = h["user"] + prefix + messages[0]["content"].strip() + "<end_of_turn>\n"
        rest = [h[m["role"]] + m["content"].strip() + "<end_of_turn>\n" for m in messages[1:]]
        text = self.bos + first + "".join(rest)
        return text + h["assistant"] if add_generation_prompt else text
