"""DeepSeek LLM (deepseek-llm-7b/67b-chat) chat format."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, around


class DeepSeekTemplate(NativeTemplate):
    """``<｜begin▁of▁sentence｜>{system}\\n\\nUser: {user}\\n\\nAssistant: {answer}<｜end▁of▁sentence｜>``

    Like deepseek-ai/deepseek-llm-7b-chat: the generation prompt is ``Assistant:`` (no space);
    the space before the answer is part of the answer. Trained: `` {answer}<｜end▁of▁sentence｜>``.
    """

    name = "deepseek"
    bos, eos = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
    roles = ("system", "user", "assistant")
    #: role -> what comes before and after its content (the layout's table; ``build`` cuts the
    #: assistant's "Assistant: " after the colon, where training starts)
    _before = {"system": "", "user": "User: ", "assistant": "Assistant: "}
    _after = {"system": "\n\n", "user": "\n\n", "assistant": eos}

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

    def layout(self, roles, add_generation_prompt) -> list[str]:
        return around(roles, self._before, self._after, self.bos, "Assistant:" if add_generation_prompt else "")


class DeepSeekR1Template(NativeTemplate):
    """DeepSeek-R1 distills (deepseek-ai/DeepSeek-R1-Distill-Llama-8B/70B, -Qwen-1.5B/7B/14B):
    ``<｜begin▁of▁sentence｜>{system}<｜User｜>{user}<｜Assistant｜>{answer}<｜end▁of▁sentence｜>``.

    The (last) system message comes first; an answer keeps only what follows ``</think>`` (earlier
    reasoning is not shown to the model again); the generation prompt is
    ``<｜Assistant｜><think>\\n`` (``thinking=False``: ``<｜Assistant｜>``, the DeepSeek-V3 prompt).
    Tool calls and outputs follow the official template, its quirks included (only the first call
    of a conversation opens ``<｜tool▁calls▁begin｜>``). Trained: ``{answer}<｜end▁of▁sentence｜>``.
    """

    name = "deepseek-r1"
    bos, eos = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
    roles = ("system", "user", "assistant", "tool")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        system = ""
        for m in messages:
            if m["role"] == "system":
                system = m["content"]
        pieces: Pieces = [(self.bos + system, False)]
        is_first, is_tool, output_first = False, False, True
        for m in messages:
            role = m["role"]
            if role == "user":
                is_tool = False
                pieces.append(("<｜User｜>" + m["content"], False))
            if role == "assistant" and m.get("content") is None:
                is_tool = False
                for call in m.get("tool_calls") or []:
                    function = call["function"]
                    body = call["type"] + "<｜tool▁sep｜>" + function["name"] + "\n```json\n"
                    body += function["arguments"] + "\n```<｜tool▁call▁end｜>"
                    if not is_first:
                        pieces += [
                            ("<｜Assistant｜>", False),
                            ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + body, True),
                        ]
                        is_first = True
                    else:
                        pieces.append(("\n<｜tool▁call▁begin｜>" + body + "<｜tool▁calls▁end｜>" + self.eos, True))
            if role == "assistant" and m.get("content") is not None:
                if is_tool:
                    pieces += [("<｜tool▁outputs▁end｜>", False), (m["content"] + self.eos, True)]
                    is_tool = False
                else:
                    content = m["content"]
                    if "</think>" in content:
                        content = content.split("</think>")[-1]
                    pieces += [("<｜Assistant｜>", False), (content + self.eos, True)]
            if role == "tool":
                is_tool = True
                if output_first:
                    text = "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>" + m["content"] + "<｜tool▁output▁end｜>"
                    output_first = False
                else:
                    text = "\n<｜tool▁output▁begin｜>" + m["content"] + "<｜tool▁output▁end｜>"
                pieces.append((text, False))
        if is_tool:
            pieces.append(("<｜tool▁outputs▁end｜>", False))
        if add_generation_prompt and not is_tool:
            pieces.append((self.generation_prompt(options), False))
        return pieces

    @staticmethod
    def generation_prompt(options) -> str:
        thinking = options.get("thinking", options.get("enable_thinking", True))
        return "<｜Assistant｜><think>\n" if thinking is not False else "<｜Assistant｜>"

    def fast(self, messages, add_generation_prompt, options) -> str:
        system, parts = "", []
        for m in messages:
            role, content = m["role"], m["content"]
            if role == "user":
                parts.append("<｜User｜>" + content)
            elif role == "assistant":
                if "</think>" in content:
                    content = content.split("</think>")[-1]
                parts.append("<｜Assistant｜>" + content + self.eos)
            elif role == "system":
                system = "" + content
            else:  # tool outputs
                raise FastMiss
        text = self.bos + system + "".join(parts)
        return text + self.generation_prompt(options) if add_generation_prompt else text
