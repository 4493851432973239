"""Gemma-2 instruction format."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


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
