"""Llama-2 and Llama-3 chat formats (Meta's official ``chat_template`` of each, rendered natively)."""

from __future__ import annotations

from openmind.nlp.templates.native import NativeTemplate, Pieces


class Llama2Template(NativeTemplate):
    """``<s>[INST] <<SYS>>\\n{system}\\n<</SYS>>\\n\\n{user} [/INST] {answer} </s>``.

    Like meta-llama/Llama-2-7b-chat-hf: the system prompt is folded into the first user turn,
    contents are stripped, each answer is `` {answer} </s>`` (note the space before EOS), turns
    alternate user/assistant. Trained: `` {answer} </s>``.
    """

    name = "llama2"
    bos, eos = "<s>", "</s>"
    stop_words = ("</s>",)
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        system = None
        loop = messages
        if messages[0]["role"] == "system":
            system, loop = messages[0]["content"], messages[1:]
        offset = len(messages) - len(loop)
        for i, m in enumerate(loop):
            if m["role"] == "system":
                raise self.fail("a system message is only allowed first", i + offset)
        self.alternate(loop, offset)
        pieces: Pieces = []
        for i, m in enumerate(loop):
            content = m["content"]
            if i == 0 and system is not None:
                content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content
            if m["role"] == "user":
                pieces.append((self.bos + "[INST] " + content.strip() + " [/INST]", False))
            else:
                pieces.append((" " + content.strip() + " " + self.eos, True))
        return pieces


class Llama3Template(NativeTemplate):
    """``<|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\\n\\n{content}<|eot_id|>...``

    Like meta-llama/Meta-Llama-3-8B-Instruct: any role gets its header, contents are stripped,
    no default system prompt. Trained: ``{answer}<|eot_id|>``.
    """

    name = "llama3"
    tool_parser = "llama3_json"
    bos = "<|begin_of_text|>"
    stop_words = ("<|eot_id|>", "<|end_of_text|>")
    roles = ("system", "user", "assistant", "tool", "ipython")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for i, m in enumerate(messages):
            header = ("" if i else self.bos) + "<|start_header_id|>" + m["role"] + "<|end_header_id|>\n\n"
            body = (m["content"] or "").strip() + "<|eot_id|>"
            if m["role"] == "assistant":
                pieces += [(header, False), (body, True)]
            else:
                pieces.append((header + body, False))
        if add_generation_prompt:
            pieces.append(("<|start_header_id|>assistant<|end_header_id|>\n\n", False))
        return pieces
