"""DeepSeek LLM (deepseek-llm-7b/67b-chat) chat format."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


class DeepSeekTemplate(NativeTemplate):
    """``<｜begin▁of▁sentence｜>{system}\\n\\nUser: {user}\\n\\nAssistant: {answer}<｜end▁of▁sentence｜>``

    Like deepseek-ai/deepseek-llm-7b-chat: the generation prompt is ``Assistant:`` (no space);
    the space before the answer is part of the answer. Trained: `` {answer}<｜end▁of▁sentence｜>``.
    """

    name = "deepseek"
    bos, eos = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
    stop_words = ("<｜end▁of▁sentence｜>",)
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = [(self.bos, False)]
        for m in messages:
            if m["role"] == "user":
                pieces.append(("User: " + m["content"] + "\n\n", False))
            elif m["role"] == "assistant":
                pieces += [("Assistant:", False), (" " + m["content"] + self.eos, True)]
            else:
                pieces.append((m["content"] + "\n\n", False))
        if add_generation_prompt:
            pieces.append(("Assistant:", False))
        return pieces
