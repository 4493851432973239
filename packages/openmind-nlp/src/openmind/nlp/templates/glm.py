"""GLM-4 chat format (THUDM/glm-4-9b-chat)."""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, tojson

TOOL_PREAMBLE = (
    "<|system|>\n你是一个名为 ChatGLM 的人工智能助手。你是基于智谱AI训练的语言模型 GLM-4 模型开发的，"
    "你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具"
)
FUNCTION_NOTE = "\n在调用上述函数时，请使用 Json 格式表示调用的参数。"


#: where GLM-4's own OpenAI-compatible server turns ``tools``, tool calls and tool results into
#: GLM-4 messages (``process_messages``), the last revision made for glm-4-9b-chat
GLM4_OPENAI_SERVER = "THUDM/GLM-4 basic_demo/openai_api_server.py, commit f887394 (2024-07-22)"


class GLM4Template(NativeTemplate):
    """``[gMASK]<sop><|system|>\n{system}<|user|>\n{user}<|assistant|>\n{answer}...``

    Like the official template: a message is ``<|{role}|>{metadata}\n{content}`` and messages
    with empty content are left out; there is no end-of-turn token (generation stops at
    ``<|user|>`` / ``<|observation|>``). GLM-4's template reads tools from a ``tools`` key on a
    message and ignores ``tools=``; OpenAI-style ``tools``, ``tool_calls`` and ``tool`` results
    are converted the way GLM-4's own OpenAI server does (:meth:`with_tools`), so ``pipeline("chat")``
    and ``deploy`` give GLM-4 the prompt its official server gives it. Function tools only; the
    built-in python/simple_browser/cogview tools need ``--template jinja``.
    Trained: ``{metadata}\n{answer}`` (a tool call: ``{name}\n{arguments}``).
    """

    name = "glm4"
    tool_parser = "glm4"
    roles = ("system", "user", "assistant", "observation", "tool")

    @staticmethod
    def with_tools(messages: list[dict], tools: list[dict] | None) -> list[dict]:
        """The GLM-4 conversation for OpenAI-style ``messages`` and ``tools``, as GLM-4's own OpenAI
        server builds it (``process_messages`` in :data:`GLM4_OPENAI_SERVER`, default ``tool_choice``):

        * ``tools`` become a first message ``{"role": "system", "content": None, "tools": tools}``,
          which takes the place of the conversation's first system message (that one is left out);
        * an assistant turn with ``tool_calls`` becomes one assistant message per call, with the
          function's name as ``metadata`` and its arguments (JSON text) as content;
        * ``tool`` (and the legacy ``function``) results become ``observation`` messages.

        Two things that server does are not followed, as they contradict the template's own
        format: without tools it inserts the system message a second time, and it splits an
        answer's text at every newline into separate assistant messages.
        """
        out: list[dict] = []
        replace_system = bool(tools)
        if tools:
            out.append({"role": "system", "content": None, "tools": list(tools)})
        for m in messages:
            role = m.get("role")
            if role in ("tool", "function"):
                out.append({"role": "observation", "content": m.get("content")})
            elif role == "assistant" and m.get("tool_calls"):
                for call in m["tool_calls"]:
                    function = call.get("function", call)
                    arguments = function.get("arguments")
                    content = arguments if isinstance(arguments, str) else tojson(arguments)
                    out.append({"role": "assistant", "metadata": function["name"], "content": content})
            elif role == "system" and replace_system:
                replace_system = False
            else:
                out.append(m)
        return out

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
            if "tools" in m or "metadata" in m or "tool_calls" in m:
                raise FastMiss
            header, content = headers[m["role"]], m["content"]
            if content:
                parts.append(header + content)
            elif content != "":
                raise FastMiss  # no text content: the full path renders tool calls or refuses it
        text = "[gMASK]<sop>" + "".join(parts)
        return text + "<|assistant|>" if add_generation_prompt else text

    #: role -> its header (no metadata); tool results miss it (they become observations)
    _headers = {role: "<|" + role + "|>\n" for role in ("system", "user", "assistant", "observation")}


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
