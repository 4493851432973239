"""Baichuan2-Chat format (no published chat_template: follows the model's ``generation_utils.py``)."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


class Baichuan2Template(NativeTemplate):
    """``{system}<reserved_106>{user}<reserved_107>{answer}</s>``

    Baichuan2's ``build_chat_input`` puts the system text first, ``<reserved_106>`` (user_token_id
    195) before each user turn and ``<reserved_107>`` (assistant_token_id 196) before each answer;
    the generation prompt is ``<reserved_107>``. Answers end with ``</s>`` so that training teaches
    the model to stop (``build_chat_input`` leaves it out of the history it builds for generation).
    Trained: ``{answer}</s>``.
    """

    name = "baichuan2"
    eos = "</s>"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for i, m in enumerate(messages):
            if m["role"] == "system":
                if i:
                    raise self.fail("a system message is only allowed first", i)
                pieces.append((m["content"], False))
            elif m["role"] == "user":
                pieces.append(("<reserved_106>" + m["content"], False))
            else:
                pieces += [("<reserved_107>", False), (m["content"] + self.eos, True)]
        if add_generation_prompt:
            pieces.append(("<reserved_107>", False))
        return pieces
