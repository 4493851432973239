"""ChatML families: Qwen2, Qwen2.5 (tools), Qwen3 (tools, thinking), InternLM2/2.5 and Yi.

Turns are ``<|im_start|>{role}\\n{content}<|im_end|>\\n``; generation stops at ``<|im_end|>``.
Trained: everything the assistant writes after ``<|im_start|>assistant\\n`` up to and including
``<|im_end|>`` (the newline after it is not trained).
"""

from __future__ import annotations

from openmind.nlp.templates.native import FastMiss, NativeTemplate, Pieces, around, tojson

IM_START, IM_END = "<|im_start|>", "<|im_end|>"


def turn(role: str, content: str) -> str:
    return IM_START + role + "\n" + content + IM_END + "\n"


#: role -> its ChatML header (the fast renderers' role table: an unknown role misses it)
HEADERS = {role: IM_START + role + "\n" for role in ("system", "user", "assistant", "tool")}
#: the same without ``tool`` (templates that render tool turns their own way)
TEXT_HEADERS = {role: HEADERS[role] for role in ("system", "user", "assistant")}
END = IM_END + "\n"
#: what follows every ChatML content
ENDS = dict.fromkeys(HEADERS, END)


def _turns(messages, headers=HEADERS) -> str:
    """``messages`` as plain ChatML turns (the fast renderers' loop)."""
    return END.join([headers[m["role"]] + m["content"] for m in messages]) + END if messages else ""


class ChatMLTemplate(NativeTemplate):
    """Plain ChatML with an optional default system prompt and BOS."""

    name = "chatml"
    #: system prompt used when the conversation has none ("" = none)
    default_system = ""
    bos = ""

    def assistant(self, content: str) -> Pieces:
        return [(IM_START + "assistant\n", False), (content + IM_END, True), ("\n", False)]

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = [(self.bos, False)] if self.bos else []
        if self.default_system and messages[0]["role"] != "system":
            pieces.append((turn("system", self.default_system), False))
        for m in messages:
            if m["role"] == "assistant":
                pieces += self.assistant(m["content"])
            else:
                pieces.append((turn(m["role"], m["content"]), False))
        if add_generation_prompt:
            pieces.append((IM_START + "assistant\n", False))
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:
        head = self.bos
        if self.default_system and roles[0] != "system":
            head += turn("system", self.default_system)
        return around(roles, HEADERS, ENDS, head, HEADERS["assistant"] if add_generation_prompt else "")


class Qwen2Template(ChatMLTemplate):
    """Qwen/Qwen2-*-Instruct: ChatML; without a system message, ``You are a helpful assistant.``"""

    name = "qwen2"
    default_system = "You are a helpful assistant."


class YiTemplate(ChatMLTemplate):
    """01-ai/Yi-*-Chat: ChatML without a default system prompt (Yi's documented chat format)."""

    name = "yi"


class InternLM2Template(ChatMLTemplate):
    """internlm/internlm2(.5)-chat: ``<s>`` + ChatML; a conversation ending with an answer gets ``</s>``."""

    name = "internlm2"

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        if messages[0]["role"] in ("user", "system"):
            pieces.append(("<s>", False))
        pieces += ChatMLTemplate.build(self, messages, tools, add_generation_prompt, options)
        if not add_generation_prompt and messages[-1]["role"] == "assistant":
            pieces.append(("</s>", False))
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:
        head = "<s>" if roles[0] in ("user", "system") else ""
        if add_generation_prompt:
            tail = HEADERS["assistant"]
        else:
            tail = "</s>" if roles[-1] == "assistant" else ""
        return around(roles, HEADERS, ENDS, head, tail)


TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>" + IM_END + "\n"
)


def _tool_section(tools: list[dict]) -> str:
    return TOOLS_INTRO + "".join("\n" + tojson(tool) for tool in tools) + TOOLS_OUTRO


def _tool_responses(messages, i: int, first_in_loop: bool) -> str:
    """Consecutive ``tool`` messages become one user turn of ``<tool_response>`` blocks."""
    text = ""
    if first_in_loop or messages[i - 1]["role"] != "tool":
        text += IM_START + "user"
    text += "\n<tool_response>\n" + messages[i]["content"] + "\n</tool_response>"
    if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
        text += IM_END + "\n"
    return text


class Qwen25Template(ChatMLTemplate):
    """Qwen/Qwen2.5-*-Instruct: ChatML, default system ``You are Qwen, created by Alibaba Cloud...``,
    tools listed in the system turn, calls as ``<tool_call>{json}</tool_call>``, tool results as
    ``<tool_response>`` blocks in a user turn."""

    name = "qwen2.5"
    tool_parser = "hermes"
    default_system = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        first_system = messages[0]["role"] == "system"
        if tools:
            system = messages[0]["content"] if first_system else self.default_system
            pieces: Pieces = [(IM_START + "system\n" + system + "\n\n" + _tool_section(tools), False)]
        else:
            pieces = [(turn("system", messages[0]["content"] if first_system else self.default_system), False)]
        for i, m in enumerate(messages):
            role = m["role"]
            if role == "user" or (role == "system" and i > 0):
                pieces.append((turn(role, m["content"]), False))
            elif role == "assistant" and not m.get("tool_calls"):
                pieces += self.assistant(m["content"])
            elif role == "assistant":
                body = ("\n" + m["content"]) if m.get("content") else ""
                for call in m["tool_calls"]:
                    call = call.get("function", call)
                    body += '\n<tool_call>\n{"name": "' + str(call["name"]) + '", "arguments": '
                    body += tojson(call.get("arguments")) + "}\n</tool_call>"
                pieces += [(IM_START + "assistant\n", False), (body[1:] + IM_END, True), ("\n", False)]
            elif role == "tool":
                pieces.append((_tool_responses(messages, i, i == 0), False))
        if add_generation_prompt:
            pieces.append((IM_START + "assistant\n", False))
        return pieces

    def fast(self, messages, add_generation_prompt, options) -> str:
        first = messages[0]
        if first["role"] == "system":
            text = turn("system", first["content"])
            messages = messages[1:]
        else:
            text = turn("system", self.default_system)
        for m in messages:
            if "tool_calls" in m:
                raise FastMiss
        text += _turns(messages, TEXT_HEADERS)
        return text + HEADERS["assistant"] if add_generation_prompt else text


class Qwen3Template(ChatMLTemplate):
    """Qwen/Qwen3: Qwen2.5's tool format without a default system prompt, plus thinking:
    answers after the last user query carry ``<think>\\n{reasoning}\\n</think>\\n\\n``
    (from ``reasoning_content`` or a ``<think>`` block in the content); earlier answers lose
    their reasoning. ``enable_thinking=False`` ends the generation prompt with an empty think block.
    """

    name = "qwen3"
    tool_parser = "hermes"
    reads_reasoning = True
    fast = None

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        first_system = messages[0]["role"] == "system"
        pieces: Pieces = []
        if tools:
            head = IM_START + "system\n" + (messages[0]["content"] + "\n\n" if first_system else "")
            pieces.append((head + _tool_section(tools), False))
        elif first_system:
            pieces.append((turn("system", messages[0]["content"]), False))
        last_query = len(messages) - 1
        for index in range(len(messages) - 1, -1, -1):
            m = messages[index]
            if m["role"] == "user" and not (
                m["content"].startswith("<tool_response>") and m["content"].endswith("</tool_response>")
            ):
                last_query = index
                break
        for i, m in enumerate(messages):
            role = m["role"]
            if role == "user" or (role == "system" and i > 0):
                pieces.append((turn(role, m["content"]), False))
            elif role == "assistant":
                content = m.get("content") or ""
                reasoning = ""
                if m.get("reasoning_content") is not None:
                    reasoning = m["reasoning_content"]
                elif "</think>" in content:
                    reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                    content = content.split("</think>")[-1].lstrip("\n")
                if i > last_query and (i == len(messages) - 1 or reasoning):
                    body = "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
                else:
                    body = content
                for k, call in enumerate(m.get("tool_calls") or []):
                    if (k == 0 and content) or k > 0:
                        body += "\n"
                    call = call.get("function") or call
                    arguments = call.get("arguments")
                    body += '<tool_call>\n{"name": "' + str(call["name"]) + '", "arguments": '
                    body += (arguments if isinstance(arguments, str) else tojson(arguments)) + "}\n</tool_call>"
                pieces += [(IM_START + "assistant\n", False), (body + IM_END, True), ("\n", False)]
            elif role == "tool":
                pieces.append((_tool_responses(messages, i, i == 0), False))
        if add_generation_prompt:
            pieces.append((IM_START + "assistant\n", False))
            if options.get("enable_thinking") is False:
                pieces.append(("<think>\n\n</think>\n\n", False))
        return pieces


#: Yi-1.5: role -> (before, after) its content; a system message past the first misses the table
YI15_BEFORE = {"user": IM_START + "user\n", "assistant": ""}
YI15_AFTER = {"user": IM_END + "\n" + IM_START + "assistant\n", "assistant": IM_END + "\n"}


class Yi15Template(NativeTemplate):
    """01-ai/Yi-1.5-*-Chat (official template): the system text comes first, as is (no ChatML
    turn); each user turn is followed by the assistant header, so the generation prompt is always
    there; answers end ``<|im_end|>\\n``. Trained: ``{answer}<|im_end|>``."""

    name = "yi1.5"
    roles = ("system", "user", "assistant")

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        pieces: Pieces = []
        if messages[0]["role"] == "system":
            pieces.append((messages[0]["content"], False))
        for i, m in enumerate(messages):
            if m["role"] == "system" and i:
                raise self.fail(
                    "Yi-1.5's template only reads a system message in first place", i, hint="Move it to the start."
                )
            if m["role"] == "user":
                pieces.append((IM_START + "user\n" + m["content"] + IM_END + "\n" + IM_START + "assistant\n", False))
            elif m["role"] == "assistant":
                pieces += [(m["content"] + IM_END, True), ("\n", False)]
        return pieces

    def layout(self, roles, add_generation_prompt) -> list[str]:
        if roles[0] == "system":  # its text, as is, then the rest (where a system role misses the tables)
            return ["", *around(roles[1:], YI15_BEFORE, YI15_AFTER)]
        return around(roles, YI15_BEFORE, YI15_AFTER)


class Qwen3VLTextTemplate(ChatMLTemplate):
    """The text part of Qwen/Qwen3-VL-*-Instruct's template (LLaMA-Factory's ``qwen3_vl_nothink``):
    Qwen3's ChatML and tool format without any thinking block and without a default system
    prompt. Images and videos need the model's own template (its folder gets it through Jinja).
    Trained: the answer (and its tool calls) up to ``<|im_end|>``."""

    name = "qwen3_vl_nothink"
    fast = None

    def build(self, messages, tools, add_generation_prompt, options) -> Pieces:
        first_system = messages[0]["role"] == "system"
        pieces: Pieces = []
        if tools:
            head = IM_START + "system\n" + (messages[0]["content"] + "\n\n" if first_system else "")
            pieces.append((head + _tool_section(tools), False))
        elif first_system:
            pieces.append((turn("system", messages[0]["content"]), False))
        for i, m in enumerate(messages):
            role = m["role"]
            if role == "system" and i:
                raise self.fail("Qwen3-VL's template only reads a system message in first place", i)
            if role == "user":
                pieces.append((turn(role, m["content"]), False))
            elif role == "assistant":
                body = m.get("content") or ""
                for k, call in enumerate(m.get("tool_calls") or []):
                    if (k == 0 and m.get("content")) or k > 0:
                        body += "\n"
                    call = call.get("function") or call
                    arguments = call.get("arguments")
                    body += '<tool_call>\n{"name": "' + str(call["name"]) + '", "arguments": '
                    body += (arguments if isinstance(arguments, str) else tojson(arguments)) + "}\n</tool_call>"
                pieces += [(IM_START + "assistant\n", False), (body + IM_END, True), ("\n", False)]
            elif role == "tool":
                pieces.append((_tool_responses(messages, i, i == 0), False))
        if add_generation_prompt:
            pieces.append((IM_START + "assistant\n", False))
        return pieces


class InternLM3Template(ChatMLTemplate):
    """internlm/internlm3-8b-instruct: ``<s>`` + ChatML, no default system prompt, nothing after
    the last answer."""

    name = "internlm3"
    bos = "<s>"
