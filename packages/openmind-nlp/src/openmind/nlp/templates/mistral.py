"""Mistral-7B-Instruct v0.1/v0.2 and Mixtral-8x7B-Instruct chat format."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


class MistralTemplate(NativeTemplate):
    """``<s>[INST] {user} [/INST]{answer}</s>[INST] ...``

    Like the official template: no system role (a coded error: put instructions into the first
    user turn), turns alternate user/assistant, contents are kept as written.
    Trained: ``{answer}</s>``.
    """

    name = "mistral"
    tool_parser = "mistral"
    bos, eos = "<s>", "</s>"
    stop_words = ("</s>",)
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        for i, m in enumerate(messages):
            if m["role"] == "system":
                raise self.fail(
                    "Mistral's chat format has no system role",
                    i,
                    hint="Put the instructions at the start of the first user message.",
                )
        self.alternate(messages)
        pieces: Pieces = [(self.bos, False)]
        for m in messages:
            if m["role"] == "user":
                pieces.append(("[INST] " + m["content"] + " [/INST]", False))
            else:
                pieces.append((m["content"] + self.eos, True))
        return pieces
