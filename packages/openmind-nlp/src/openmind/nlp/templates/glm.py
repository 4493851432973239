"""GLM-4 chat format (THUDM/glm-4-9b-chat)."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, tojson

TOOL_PREAMBLE = (
    "<|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，"
    "你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具"
)
FUNCTION_NOTE = "\n在调用上述函数时，请使用 Json 格式表示调用的参数。"


class GLM4Template(NativeTemplate):
    """``[gMASK]<sop><|system|>\\n{system}<|user|>\\n{user}<|assistant|>\\n{answer}...``

    Like the official template: a message is ``<|{role}|>{metadata}\\n{content}`` and messages
    with empty content are left out; there is no end-of-turn token (generation stops at
    ``<|user|>`` / ``<|observation|>``). Tools: GLM-4 lists them in the system turn from a
    ``tools`` key on a message; ``tools=`` is put on the first system message (or on an empty
    system message added in front), the way GLM-4's own API server does. Function tools only;
    the built-in python/simple_browser/cogview tools need ``--template jinja``.
    Trained: ``{metadata}\\n{answer}``.
    """

    name = "glm4"
    tool_parser = "glm4"
    roles = ("system", "user", "assistant", "observation", "tool")

    @staticmethod
    def with_tools(messages: list[dict], tools: list[dict] | None) -> list[dict]:
        """The conversation GLM-4's template expects for ``tools``."""
        if not tools:
            return list(messages)
        if messages and messages[0]["role"] == "system":
            return [{**messages[0], "tools": tools}, *messages[1:]]
        return [{"role": "system", "content": "", "tools": tools}, *messages]

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = [("[gMASK]<sop>", False)]
        for m in self.with_tools(messages, tools):
            if "tools" in m:
                text = TOOL_PREAMBLE
                for tool in m["tools"]:
                    if tool.get("type") != "function":
                        raise self.fail(
                            f"built-in tool type {tool.get('type')!r} is not rendered natively",
                            hint="Use --template jinja with the model's own chat_template for GLM-4 built-in tools.",
                        )
                    function = tool["function"]
                    # one newline, not two: trim_blocks eats the first after the official `{% if %}`
                    text += "\n## " + str(function["name"]) + "\n\n" + tojson(function, indent=4) + FUNCTION_NOTE
                pieces.append((text, False))
            if not m.get("content"):
                continue
            metadata = m.get("metadata", "")
            metadata = "None" if metadata is None else str(metadata)
            if m["role"] == "assistant":
                pieces += [("<|assistant|>", False), (metadata + "\n" + m["content"], True)]
            else:
                pieces.append(("<|" + m["role"] + "|>" + metadata + "\n" + m["content"], False))
        if add_generation_prompt:
            pieces.append(("<|assistant|>", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        headers, parts = self._headers, []
        for m in messages:
            if "tools" in m or "metadata" in m:
                raise FastMiss
            header, content = headers[m["role"]], m["content"]
            if content:
                parts.append(header + content)
            elif content != "":
                raise FastMiss  # no text content: the full path renders tool calls or refuses it
        text = "[gMASK]<sop>" + "".join(parts)
        return text + "<|assistant|>" if add_generation_prompt else text

    #: role -> its header (no metadata)
    _headers = {role: "<|" + role + "|>\n" for role in roles}


class ChatGLM3Template(NativeTemplate):
    """ChatGLM3-6B: ``[gMASK]sop<|{role}|>\\n {content}...`` (a space after each role line, no
    end-of-turn token; generation stops at ``<|user|>`` / ``<|observation|>``).
    Trained: ``\\n {answer}`` after ``<|assistant|>``."""

    name = "chatglm3"
    roles = ("system", "user", "assistant", "observation")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        for i, m in enumerate(messages):
            head = ("[gMASK]sop" if i == 0 else "") + "<|" + m["role"] + "|>"
            if m["role"] == "assistant":
                pieces += [(head, False), ("\n " + m["content"], True)]
            else:
                pieces.append((head + "\n " + m["content"], False))
        if add_generation_prompt:
            pieces.append(("<|assistant|>", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        headers = self._headers
        text = "[gMASK]sop" + "".join([headers[m["role"]] + m["content"] for m in messages])
        return text + "<|assistant|>" if add_generation_prompt else text

    #: role -> its header
    _headers = {role: "<|" + role + "|>\n " for role in roles}
